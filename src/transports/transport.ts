/**
 * The contract every transport (SMPP, modem, simulator) implements and the dispatch engine drives.
 *
 * A transport knows nothing of campaigns: it takes one message already planned by the SMS core
 * (encoding chosen, text split into segments) and hands its parts to the network, reporting one
 * outcome per part. It reports receipts and inbound messages through handlers that it awaits:
 * a transport acknowledges a receipt to its peer (deliver_sm_resp, AT+CNMA, deleting a stored
 * report) only after the handler's promise resolves, so a receipt is never acknowledged before
 * it is stored.
 *
 * This contract knows no list of transport types: the registry (src/transports/registry.ts)
 * imports the transports, never the reverse, so the contract stays the innermost module of
 * transports/ (ARCHITECTURE.md, arrows point inward; test/architecture/no-import-cycles.test.ts).
 */
import type { Encoding, SenderKind } from '../sms/index.js';

// One definition of the sender kinds (src/sms/sender-id.ts), re-exported for transports' users.
export type { SenderKind } from '../sms/index.js';

export interface OutboundSender {
  /** Sender id as the campaign gave it, trimmed. */
  value: string;
  kind: SenderKind;
  /** SMPP 3.4 §5.2.5/§5.2.6: alphanumeric 5/0, international 1/1, short code 3/0. */
  ton: number;
  npi: number;
}

export interface OutboundMessage {
  /** The engine's key for this message (stable across retries); used in logs only. */
  messageKey: string;
  /** Normalised msisdn, digits only, international form without '+'. */
  destination: string;
  sender: OutboundSender;
  encoding: Encoding;
  /** Part texts from the SMS core's planMessage(); segments.join('') is the whole text. */
  segments: readonly string[];
  /** Concatenation reference (0..65535), the same for every part and every retry of the message. */
  concatReference: number;
  /**
   * 1-based part numbers to send now; omitted means every part. On a retry the engine sends only
   * the parts that failed temporarily or whose submit result was lost, keeping each part's number
   * and the total so the handset still reassembles the whole.
   */
  partNumbers?: readonly number[];
  /**
   * Asked by a transport that had to wait (for a window slot, a rate token) just before a part
   * goes on the wire: false means send nothing more of this message and answer its parts
   * 'not-sent' (LEASE_LAPSED). The engine sets it on a cluster node, where a node frozen past its
   * lease wakes with submits its peers have sent meanwhile. Absent: always send.
   */
  mayStillSend?: () => boolean;
  /**
   * Present for a part an SMPP customer cut itself: send this one segment as part `sequence` of
   * `total` with the customer's reference and scheme, in this data coding (OutboundCustomerCut). Absent
   * for every other message.
   */
  customerCut?: OutboundCustomerCut;
}

/**
 * What a transport says about one part: the whole seam between a transport and the engine. The
 * transport only reports what happened; the engine alone decides hold, retry, backoff and attempt
 * counts (src/engine/outcome-decision.ts), so a lasting temporary error is sent at most
 * `engine.maxAttempts` times in all. A transport never retries a part that reached its peer.
 *
 * - `accepted`: the peer took the part. The engine marks it submitted with `messageId` (already
 *   normalised, see normalizeMessageId) and waits for its receipt.
 * - `not-sent`: nothing reached the network because the transport is down or stopping. The engine
 *   holds the part (back to the queue after its poll interval) without spending an attempt.
 *   Handing a part to another link inside the transport (a modem lost before the PDU was written)
 *   happens before any outcome and is not an attempt either.
 * - `temporary`: the part was tried and may succeed later (throttled, queue full, timeout, link
 *   lost with the result unknown). The engine spends one attempt and requeues it after its backoff,
 *   at least `retryAfterMs` when given, or fails it with `status` once engine.maxAttempts is spent.
 *   While the engine stops it holds the part instead.
 * - `permanent`: the part will never go. The engine spends the attempt and fails it at once.
 *
 * `status` is the code recorded on the part and shown to the recipient (SMPP command_status name,
 * `CMS_ERROR_<n>`, a local code such as RESPONSE_TIMEOUT; at most 30 characters), `errorCode` the
 * peer's numeric code when it gave one.
 */
export type PartOutcome =
  | { part: number; kind: 'accepted'; messageId: string }
  | { part: number; kind: 'not-sent'; reason: NotSentReason }
  | { part: number; kind: 'temporary'; status: string; errorCode?: number; retryAfterMs?: number }
  | { part: number; kind: 'permanent'; status: string; errorCode?: number };

/**
 * Why a part never reached the network. LEASE_LAPSED is the engine's own: a cluster node held the
 * part back because its lease may have run out (NodeIdSource.leaseHeld), never a transport's.
 */
export type NotSentReason = 'TRANSPORT_DOWN' | 'TRANSPORT_STOPPED' | 'LEASE_LAPSED';

export interface TransportReceipt {
  /** Normalised message id, in the same form the transport gave in the 'accepted' outcome. */
  messageId: string;
  /** Status text for the recipient: alphabetic `stat:` as sent, else raw status text; max 30 characters. */
  status: string;
  /** True when the status is final (delivered, undeliverable, expired, rejected, deleted...). */
  final: boolean;
  errorCode?: string;
  /** When the network says it finished, as an ISO-8601 instant, if it said. */
  doneAt?: string;
  /** The receipt as received (SMPP short_message text or the status report PDU hex), for audit. */
  raw: string;
}

/**
 * One mobile-originated message, or one part of a concatenated one. Transports hand parts on as
 * they arrive (no reassembly in the transport): the receiving side stores each part durably and
 * joins them once all are there (src/inbound), so parts survive reconnects and restarts.
 */
export interface InboundMessage {
  from: string;
  to: string;
  /** The text as decoded from this PDU alone (GSM-7 with its national shift tables). */
  text: string;
  receivedAt: string;
  raw: string;
  /**
   * UCS-2 and 8-bit data: the user data octets after any UDH, as hex. Parts are joined as octets
   * before decoding, so a surrogate pair (or an odd octet) split across parts stays intact. Absent
   * for GSM-7 (each part's septets decode on their own).
   */
  content?: { coding: 'ucs2' | 'binary'; octetsHex: string };
  /** Present when this is one part of a concatenated message (UDH IE 0x00 / 0x08, or SMPP SAR TLVs). */
  concat?: ConcatHeader;
}

/**
 * A concatenation header, read from a part that arrived or given for a part to send: an 8-bit or
 * 16-bit reference UDH (3GPP TS 23.040 §9.2.3.24.1 / §9.2.3.24.8) or the SMPP SAR TLVs
 * (SMPP 3.4 §5.3.2.22-24).
 */
export interface ConcatHeader {
  scheme: 'udh8' | 'udh16' | 'sar';
  reference: number;
  total: number;
  /** 1-based. */
  sequence: number;
}

/**
 * One part exactly as an SMPP customer cut it (src/smpp-server: a submit_sm stored as a campaign),
 * in its SMPP data_coding (0 SMSC default alphabet, 3 Latin-1, 8 UCS-2). With a `concat` the
 * message has one segment, the customer's part text, which goes out as part `concat.sequence` of
 * `concat.total` with the customer's reference and scheme, never re-split. `concat` null: the
 * customer sent no header; the segments are the SMS core's, concatenated as the transport does
 * for any message.
 */
export interface OutboundCustomerCut {
  dataCoding: 0 | 3 | 8;
  concat: ConcatHeader | null;
}

/** A PDU a modem handed up that the codec could not read: stored before it leaves the SIM, never dropped unrecorded. */
export interface UndecodablePdu {
  /** The device it came from. */
  device: string;
  /** As the modem gave it (SMSC address and TPDU, hex). */
  hex: string;
  /** The decoder's GatewayError code, e.g. PDU_TRUNCATED. */
  reasonCode: string;
  reason: string;
  receivedAt: string;
}

export type TransportState =
  | { state: 'binding' }
  | { state: 'bound'; detail?: string }
  | { state: 'down'; reason: string };

/**
 * One link of a transport as the admin status page and metrics show it: an SMPP bind, a modem.
 * Read-only diagnostics; reading it must not block or touch the network.
 */
export interface TransportLink {
  /** The bind's index ('0', '1', ...) or the modem device's name. */
  name: string;
  state: TransportState['state'];
  /** When the link entered this state (ms since epoch). */
  sinceMs: number;
  /** The last failure (refused bind, lost connection, port error), null when none yet. */
  lastError: string | null;
  /** Submits awaiting their response on this link, and how many it may have. */
  windowUsed: number;
  windowSize: number;
  /** Modems only, as last polled. */
  radio?: ModemRadio;
}

export interface ModemRadio {
  operator: string | null;
  signalDbm: number | null;
  /** TS 27.007 +CREG <stat> name: 'registered-home', 'registered-roaming', 'searching', ... */
  registration: string;
  /** The last +CMS ERROR a submit got ('CMS_ERROR_332'), null when none. */
  lastCmsError: string | null;
}

export interface TransportHandlers {
  /** Must be awaited before the receipt is acknowledged to the peer. Rejecting means "not stored": do not acknowledge. */
  onReceipt(receipt: TransportReceipt): Promise<void>;
  /** Must be awaited before the message (or part) is acknowledged or deleted; rejecting means "not stored". */
  onInbound(message: InboundMessage): Promise<void>;
  /**
   * Stores a PDU that could not be decoded; must be awaited before the PDU is deleted from the
   * SIM or acknowledged. A transport whose handlers lack it leaves such a PDU on the SIM.
   */
  onUndecodable?(pdu: UndecodablePdu): Promise<void>;
  /**
   * Whether a part submitted on this transport has this (normalised) message id. Used to read an
   * unmarked deliver_sm whose text is a receipt as that part's receipt; without it such a
   * deliver_sm stays an inbound message.
   */
  isSubmittedMessageId?(messageId: string): Promise<boolean>;
  onState(state: TransportState): void;
}

/** `Type` is the transport's config `type` ('smpp', 'modem', ...); its module (TransportModule) pins it. */
export interface Transport<Type extends string = string> {
  readonly name: string;
  readonly type: Type;
  /** Most submits this transport can usefully have in flight at once (the engine's queue concurrency). */
  readonly windowSize: number;
  /** Parts per second this transport accepts at most (the engine's queue rate). */
  readonly maxPerSecond: number;

  /** Set before start(); receipts that arrive before handlers are set are not acknowledged. */
  setHandlers(handlers: TransportHandlers): void;
  /** Starts connecting; resolves once the first connection attempt has been made (it may still be down). */
  start(): Promise<void>;
  /**
   * Stops taking submits, waits up to drainTimeoutMs for in-flight responses, then disconnects
   * cleanly (SMPP unbind). Every submit still pending after that resolves: 'temporary' for a part
   * already written to the peer, 'not-sent' (TRANSPORT_STOPPED) for one still waiting locally.
   */
  stop(drainTimeoutMs?: number): Promise<void>;
  /**
   * Sends the message's parts. Never rejects for a per-part problem: every requested part gets
   * exactly one outcome. While the transport is down or stopped, parts resolve as 'not-sent'
   * without touching the network.
   */
  submit(message: OutboundMessage): Promise<PartOutcome[]>;
  currentState(): TransportState;
  /**
   * Optional; only a transport that keeps its pending receipts in process memory implements it
   * (the simulator). A real SMSC or modem keeps undelivered receipts itself and offers them again
   * after a reconnect, so SMPP and modem transports leave it out. On start the engine passes the
   * message ids of its parts still waiting for a final receipt on this transport; the transport
   * reports a receipt for each id it made (others are ignored) and returns how many it will report.
   */
  recoverReceipts?(messageIds: readonly string[]): number;
  /** Optional diagnostics per link (SMPP binds, modems); a transport without links is shown as one. */
  links?(): TransportLink[];
  /**
   * Optional: what its links did since the transport was built, over every link it ever had (a
   * bind handed to another cluster node keeps its counts here), so each only grows. Read when
   * metrics are scraped (smsgate_bind_attempts_total and the others); must not block.
   */
  linkCounters?(): LinkCounters;
}

/**
 * Counts of a transport's link events. A failure's reason is the coded error (GatewayError code
 * such as SMPP_CONNECT_FAILED, SMPP_BIND_REFUSED, SMPP_BIND_TIMEOUT) or OTHER: a bounded set, never
 * the error's text, so the metric's label values stay few.
 */
export interface LinkCounters {
  /** Attempts to bind (or open) a link. */
  bindAttempts: number;
  /** Attempts that failed, by reason. */
  bindFailures: ReadonlyMap<string, number>;
  /** Sessions lost after they were bound (each followed by a reconnect, unless the transport stops). */
  sessionsLost: number;
}

/**
 * The SMPP server for customers (ESMEs that bind to smsgate, SMPP 3.4), as its parts see each other:
 *
 *   listener/session (protocol: binds, windows, enquire_link, unbind, generic_nack)
 *     -> BindGate     (accounts: credentials, allowed addresses, bind limits across the cluster)
 *     -> SubmitIntake (submit_sm, query_sm, cancel_sm: validated, priced, rated, routed, stored
 *                      durably as a campaign of one recipient and one part before submit_sm_resp)
 *   engine (the part goes upstream as the customer cut it: CustomerCut)
 *     -> part changes write a CustomerDelivery row (smpp_deliveries) in the receipt's commit
 *     -> DeliverySender (store and forward: deliver_sm on the account's receiver-capable binds)
 *
 * Everything the parts exchange is typed here; each part's module implements its side. Store
 * ports are implemented once per backend (src/store/sqlite/, src/store/postgres/).
 */

import { DEFAULT_RECEIPT_RETENTION_HOURS } from '../smpp-customer/customer-cut.js';
import type { DeliverSmFields, MessageState } from '../smpp-customer/deliver-sm.js';

/** SMPP 3.4 §4.1: the three binds. */
export type BindType = 'transmitter' | 'receiver' | 'transceiver';

/** May a session of this bind type be sent deliver_sm (receipts, inbound)? SMPP 3.4 §2.2. */
export function receivesDeliveries(bindType: BindType): boolean {
  return bindType !== 'transmitter';
}

/** May a session of this bind type send submit_sm, query_sm, cancel_sm? SMPP 3.4 §2.2. */
export function sendsSubmits(bindType: BindType): boolean {
  return bindType !== 'receiver';
}

/** The `smppServer` config section (off without it). */
export interface SmppServerConfig {
  host: string;
  port: number;
  /** PEM files; the listener speaks TLS when given (SMPP over TLS, as our client's `tls`). */
  tls?: { certFile: string; keyFile: string };
  /** Outstanding requests per session in each direction (SMPP 3.4 §2.7 windowing). */
  windowSize: number;
  /** Idle time after which the server sends enquire_link; a session silent for twice this is closed. */
  enquireLinkIntervalMs: number;
  /** How long the server waits for a customer's response (deliver_sm_resp, enquire_link_resp). */
  responseTimeoutMs: number;
  /** How long a receipt or inbound message waits for the customer to bind before it expires. */
  receiptRetentionHours: number;
}

export const SMPP_SERVER_DEFAULTS: Omit<SmppServerConfig, 'host' | 'port'> = {
  windowSize: 100,
  enquireLinkIntervalMs: 30_000,
  responseTimeoutMs: 10_000,
  receiptRetentionHours: DEFAULT_RECEIPT_RETENTION_HOURS,
};

/**
 * SMPP 3.4 §5.1.3 command_status values the server answers with. The choice per case is written
 * in docs/behaviour/smpp-server.md; these are the only ones it uses.
 */
export const SERVER_STATUS = {
  ok: 0x00,
  /** Message length invalid: short_message and message_payload both, or over what one part holds. */
  invalidMessageLength: 0x01,
  /** A PDU the bind state does not allow (submit_sm on a receiver, anything before a bind). */
  invalidBindStatus: 0x04,
  /** The account already holds its --max-binds binds (across the cluster). */
  alreadyBound: 0x05,
  /** Store unavailable, or a failure of ours: the customer may retry. */
  systemError: 0x08,
  invalidSourceAddress: 0x0a,
  invalidDestinationAddress: 0x0b,
  invalidMessageId: 0x0c,
  /** Wrong system_id or password, or a refused address. */
  bindFailed: 0x0d,
  cancelFailed: 0x11,
  /** Not enough credits, or no route for the destination. */
  submitFailed: 0x45,
  /** Over the account's client send rate. */
  throttled: 0x58,
  queryFailed: 0x67,
  /** ESME_RINVOPTPARSTREAM (SMPP 3.4 §5.1.3): data_coding other than 0, 3 or 8, an unreadable UDH, or SAR TLVs incomplete or out of range. */
  invalidParameter: 0xc0,
} as const;
export type ServerStatus = (typeof SERVER_STATUS)[keyof typeof SERVER_STATUS];

/** A customer account as the server uses it (never its password). */
export interface SmppAccount {
  id: number;
  systemId: string;
  clientId: number;
  clientName: string;
  /** null: no limit. */
  maxBinds: number | null;
  /** CIDR blocks (IPv4 or IPv6); empty: any address. */
  allowIps: readonly string[];
}

// ---------------------------------------------------------------------------------------------
// Protocol layer <-> services

export interface BindRequest {
  bindType: BindType;
  systemId: string;
  password: string;
  systemType: string;
  interfaceVersion: number;
  /** The peer's IP address as the socket reports it (IPv4-mapped IPv6 unwrapped). */
  remoteAddress: string;
}

export type BindDecision =
  | { kind: 'bound'; session: ServerSessionInfo }
  | { kind: 'refused'; status: ServerStatus };

/** A bound session, as the services know it. */
export interface ServerSessionInfo {
  /** Unique across the cluster (a random UUID); the key of its smpp_server_sessions row. */
  sessionId: string;
  account: SmppAccount;
  bindType: BindType;
  remoteAddress: string;
}

/** submit_sm's fields as received (SMPP 3.4 §4.4.1), octet strings as Buffers. */
export interface SubmitSmFields {
  serviceType: string;
  sourceAddrTon: number;
  sourceAddrNpi: number;
  sourceAddr: string;
  destAddrTon: number;
  destAddrNpi: number;
  destinationAddr: string;
  esmClass: number;
  protocolId: number;
  priorityFlag: number;
  scheduleDeliveryTime: string;
  validityPeriod: string;
  registeredDelivery: number;
  dataCoding: number;
  /** The short_message octets as sent, a UDH included when esm_class has UDHI (0x40). */
  shortMessage: Buffer;
  /** The message_payload TLV (0x0424), when sent instead of short_message. */
  messagePayload?: Buffer;
  /** SAR TLVs (0x020C, 0x020E, 0x020F) when the customer cut the message with them. */
  sar?: { reference: number; total: number; sequence: number };
}

export type SubmitOutcome =
  | { kind: 'accepted'; messageId: string }
  | { kind: 'refused'; status: ServerStatus };

export type QueryOutcome =
  | { kind: 'found'; finalDate: string; messageState: MessageState; errorCode: number }
  | { kind: 'refused'; status: ServerStatus };

/** What the protocol layer asks of the services; each method resolves only after any write is durable. */
export interface ServerHandlers {
  bind(request: BindRequest): Promise<BindDecision>;
  /** The session ended (unbind, closed, timed out): its bind slot is free again. */
  unbound(session: ServerSessionInfo): Promise<void>;
  submit(session: ServerSessionInfo, fields: SubmitSmFields): Promise<SubmitOutcome>;
  query(session: ServerSessionInfo, messageId: string, sourceAddr: string): Promise<QueryOutcome>;
  cancel(session: ServerSessionInfo, messageId: string, sourceAddr: string, destinationAddr: string): Promise<{ status: ServerStatus }>;
}

// ---------------------------------------------------------------------------------------------
// Towards the customer: deliver_sm

export type DeliverResult =
  | { kind: 'acknowledged' }
  /** deliver_sm_resp with a non-zero status: sent again later. */
  | { kind: 'refused'; status: number }
  /** No response in time, or the session ended first: sent again later. */
  | { kind: 'lost'; reason: 'timeout' | 'closed' };

/** A bound session of this node as the delivery sender uses it. */
export interface DeliveringSession {
  readonly info: ServerSessionInfo;
  /** Free window slots for deliver_sm right now. */
  readonly freeSlots: number;
  deliver(fields: DeliverSmFields): Promise<DeliverResult>;
}

/** The live sessions of this node, as the listener keeps them. */
export interface LocalSessions {
  /** The account's bound receiver and transceiver sessions on this node. */
  receiversOf(accountId: number): readonly DeliveringSession[];
  /** Accounts with at least one receiver-capable session on this node. */
  accountsWithReceivers(): readonly number[];
  /** Called when a receiver-capable session binds (the sender starts on its waiting rows at once). */
  onReceiverBound(listener: (session: ServerSessionInfo) => void): void;
}

/** One server session as /status.json and the status page list it. */
export interface ServerSessionView {
  sessionId: string;
  systemId: string;
  bindType: BindType;
  address: string;
  nodeId: string;
  boundAt: number;
  /** Requests outstanding in this session's window now, this node's sessions only (null elsewhere). */
  windowInUse: number | null;
  windowSize: number;
  /** submit_sm a second over the last 10 s, this node's sessions only (null elsewhere). */
  submitsPerSecond: number | null;
}

// ---------------------------------------------------------------------------------------------
// The customer's cut: how one submit_sm goes upstream

/** A concatenation header: 8-bit or 16-bit reference UDH (3GPP TS 23.040 §9.2.3.24.1/.8) or SAR TLVs. */
export type { ConcatHeader } from '../transports/transport.js';
export { DEFAULT_RECEIPT_RETENTION_HOURS, wantsReceipt, type CustomerCut, type CustomerDataCoding } from '../smpp-customer/customer-cut.js';
export { MESSAGE_STATE, parseDeliverSm, serializeDeliverSm, type DeliverSmFields, type MessageState } from '../smpp-customer/deliver-sm.js';

// ---------------------------------------------------------------------------------------------
// Visibility

/** submit_sm answered, counted by account and by the submit_sm_resp's status name (ESME_ROK when accepted). */
export interface SubmitCount {
  systemId: string;
  /** The command_status name (src/transports/smpp/command-status.ts), e.g. ESME_ROK, ESME_RTHROTTLED. */
  status: string;
  count: number;
}

/** What the running server tells the status page, /status.json and /metrics. */
export interface SmppServerStatusSource {
  /** Every bound session of the cluster (this node's with window use and rate). */
  sessions(): Promise<ServerSessionView[]>;
  /** smpp_deliveries waiting, by account system_id (every account with an SMPP account row, 0 included). */
  deliveriesWaiting(): Promise<ReadonlyMap<string, number>>;
  /** This node's submit_sm counts since start. */
  submitCounts(): readonly SubmitCount[];
}

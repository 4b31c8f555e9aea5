/**
 * Where every transport's mobile-originated messages go (issue 14): each part is stored as it
 * arrives (one transaction, before the transport acknowledges it), the whole message is made once
 * every part is there, and a message whose parts stop coming is made from what arrived after
 * reassemblyTimeoutMs (10 minutes), flagged incomplete. Parts live in the database, so reassembly
 * survives reconnects (a repeated part is ignored) and restarts (the sweep runs at start).
 *
 * A whole message is routed by its To address (inbound_routes); a routed one may opt its sender
 * out (the client's keywords) and is queued for the client's inbound webhook in the same
 * transaction; an unrouted one is kept (client_id NULL) and never sent to any client.
 */
import { randomUUID } from 'node:crypto';
import type { Logger } from '../log.js';
import { numberingPlanFor, type NumberingPlan } from '../sms/index.js';
import type { SqliteDatabase } from '../store/database.js';
import type { InboundPartRow } from '../store/entities.js';
import { InboundStore, type NewInboundMessage, type PartGroupKey } from '../store/inbound-store.js';
import { insertOutboxRow } from '../store/webhook-store.js';
import type { InboundMessage } from '../transports/transport.js';
import { normalizeInboundAddress } from './address.js';
import { assembleParts, decodeOctets } from './assemble.js';
import { serializeInboundWebhook } from './inbound-webhook.js';
import { isOptoutText } from './optout-keywords.js';

/** Issue 14: an incomplete message is delivered as what arrived after 10 minutes. */
export const INBOUND_REASSEMBLY_TIMEOUT_MS = 10 * 60_000;
/** The sweep for overdue parts runs this often at most (and at least every tenth of the timeout). */
const MAX_SWEEP_INTERVAL_MS = 30_000;

export interface InboundServiceOptions {
  db: SqliteDatabase;
  logger: Logger;
  /** Called after a commit that queued an inbound webhook. */
  wakeWebhooks(): void;
  now?: () => number;
  reassemblyTimeoutMs?: number;
  /** How From and To numbers are normalised (config `numbering.country`); default Ireland's, SPEC "Recipient". */
  numbering?: NumberingPlan;
}

/** What receive() did with a message or part, for logs and tests. */
export type InboundOutcome =
  | { kind: 'part-stored'; stored: number; total: number }
  | { kind: 'part-repeated' }
  | { kind: 'message'; publicId: string; clientId: number | null; incomplete: boolean; optedOut: boolean };

/** A message as read off the parts, before it is given its public id and routed to a client. */
type WholeMessage = Omit<NewInboundMessage, 'publicId' | 'clientId'>;

export class InboundService {
  private readonly store: InboundStore;
  private readonly now: () => number;
  private readonly timeoutMs: number;
  private readonly numbering: NumberingPlan;
  private sweepTimer: NodeJS.Timeout | null = null;

  constructor(private readonly options: InboundServiceOptions) {
    this.store = new InboundStore(options.db);
    this.now = options.now ?? Date.now;
    this.timeoutMs = options.reassemblyTimeoutMs ?? INBOUND_REASSEMBLY_TIMEOUT_MS;
    this.numbering = options.numbering ?? numberingPlanFor();
  }

  /** Sweeps overdue parts now (left by a crash or a stop) and then periodically. */
  start(): void {
    this.sweep();
    const intervalMs = Math.min(MAX_SWEEP_INTERVAL_MS, Math.max(10, Math.floor(this.timeoutMs / 10)));
    this.sweepTimer = setInterval(() => {
      try {
        this.sweep();
      } catch (err) {
        this.options.logger.error({ err }, 'inbound reassembly sweep failed; retried at the next interval');
      }
    }, intervalMs);
    this.sweepTimer.unref();
  }

  stop(): void {
    if (this.sweepTimer !== null) clearInterval(this.sweepTimer);
    this.sweepTimer = null;
  }

  /**
   * Stores one message or part. Synchronous and committed on return: the transport acknowledges
   * (deliver_sm_resp, AT+CMGD) only after this, so nothing acknowledged is lost to a crash.
   */
  receive(transport: string, message: InboundMessage): InboundOutcome {
    const nowMs = this.now();
    const sender = normalizeInboundAddress(message.from, this.numbering);
    const recipient = normalizeInboundAddress(message.to, this.numbering);
    const concat = message.concat;
    const outcome = this.options.db.transaction((): InboundOutcome => {
      const isPart = concat !== undefined && concat.total > 1 && concat.sequence >= 1 && concat.sequence <= concat.total;
      if (!isPart) {
        const text = message.content === undefined ? message.text : decodeOctets(message.content.coding, message.content.octetsHex);
        return this.deliver({ transport, sender, recipient, text, raw: message.raw, receivedAtMs: nowMs, incomplete: false }, nowMs);
      }
      const key: PartGroupKey = { transport, sender, recipient, scheme: concat.scheme, reference: concat.reference, total: concat.total };
      const inserted = this.store.insertPart({
        ...toKeyColumns(key),
        sequence: concat.sequence,
        coding: message.content?.coding ?? 'gsm7',
        body: message.content?.octetsHex ?? message.text,
        raw: message.raw,
        received_at: nowMs,
      });
      if (!inserted) return { kind: 'part-repeated' };
      const parts = this.store.groupParts(key);
      if (parts.length < concat.total) return { kind: 'part-stored', stored: parts.length, total: concat.total };
      return this.deliverGroup(key, parts, nowMs);
    })();
    this.afterCommit(transport, outcome);
    return outcome;
  }

  /** Delivers every message whose first part arrived timeoutMs or more ago, as what arrived. Returns how many. */
  sweep(): number {
    const nowMs = this.now();
    const groups = this.store.staleGroups(nowMs - this.timeoutMs);
    for (const key of groups) {
      const outcome = this.options.db.transaction(() => this.deliverGroup(key, this.store.groupParts(key), nowMs))();
      this.afterCommit(key.transport, outcome);
    }
    return groups.length;
  }

  private deliverGroup(key: PartGroupKey, parts: readonly InboundPartRow[], nowMs: number): InboundOutcome {
    const { text, missing } = assembleParts(parts, key.total);
    this.store.deleteGroup(key);
    if (missing.length > 0) {
      this.options.logger.warn({ transport: key.transport, reference: key.reference, total: key.total, missing }, 'inbound message incomplete after the reassembly timeout; delivered as what arrived');
    }
    return this.deliver(
      {
        transport: key.transport,
        sender: key.sender,
        recipient: key.recipient,
        text,
        raw: parts.map((part) => part.raw).join('\n'),
        // When the message became whole (its last part, or the timeout), not its first part: so
        // received_at only grows with storage order, and GET /v1/inbound?since= misses nothing.
        receivedAtMs: nowMs,
        incomplete: missing.length > 0,
      },
      nowMs,
    );
  }

  private deliver(message: WholeMessage, nowMs: number): InboundOutcome {
    const publicId = randomUUID();
    const clientId = this.store.routeClientId(message.recipient);
    this.store.insertMessage({ publicId, ...message, clientId });
    if (clientId === null) return { kind: 'message', publicId, clientId, incomplete: message.incomplete, optedOut: false };
    const optedOut = !message.incomplete && isOptoutText(message.text, this.store.optoutKeywords(clientId)) && this.store.addOptout(clientId, message.sender, 'keyword', nowMs);
    const body = serializeInboundWebhook({
      messageId: publicId,
      from: message.sender,
      to: message.recipient,
      text: message.text,
      receivedAtMs: message.receivedAtMs,
      incomplete: message.incomplete,
    });
    insertOutboxRow(this.options.db, { kind: 'inbound', clientId, recipientId: null, body, nowMs });
    return { kind: 'message', publicId, clientId, incomplete: message.incomplete, optedOut };
  }

  private afterCommit(transport: string, outcome: InboundOutcome): void {
    const { logger } = this.options;
    if (outcome.kind !== 'message') {
      logger.debug({ transport, outcome }, 'inbound part stored');
      return;
    }
    // Text is not logged (STYLE 12): only who and whether it was routed.
    logger.info({ transport, messageId: outcome.publicId, routed: outcome.clientId !== null, incomplete: outcome.incomplete, optedOut: outcome.optedOut }, 'inbound message stored');
    if (outcome.clientId !== null) this.options.wakeWebhooks();
  }
}

function toKeyColumns(key: PartGroupKey): Pick<InboundPartRow, 'transport' | 'sender' | 'recipient' | 'scheme' | 'reference' | 'total'> {
  return { transport: key.transport, sender: key.sender, recipient: key.recipient, scheme: key.scheme, reference: key.reference, total: key.total };
}

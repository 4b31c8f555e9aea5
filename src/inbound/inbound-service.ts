/**
 * Where every transport's mobile-originated messages go: each part is stored as it
 * arrives (one transaction, before the transport acknowledges it), the whole message is made once
 * every part is there, and a message whose parts stop coming is made from what arrived after
 * reassemblyTimeoutMs (10 minutes), flagged incomplete. Parts live in the database, so reassembly
 * survives reconnects (a repeated part is ignored) and restarts (the sweep runs at start).
 *
 * A whole message is routed by its To address (inbound_routes); a routed one may opt its sender
 * out (the client's keywords) and is queued for the client's inbound webhook in the same
 * transaction; an unrouted one is kept (client_id NULL) and never sent to any client. A client
 * that takes its messages over SMPP (an account bound anywhere, or with messages still waiting for
 * it) gets them as deliver_sm rows stored in that transaction instead of the webhook
 * (src/smpp-customer/inbound-deliver-sm.ts decides).
 */
import { randomUUID } from 'node:crypto';
import { NOOP_OBSERVER, type GatewayObserver } from '../gateway-observer.js';
import { GatewayError } from '../common/errors.js';
import type { Logger } from '../common/log.js';
import { yieldToEventLoop } from '../common/loop-turns.js';
import { numberingPlanFor, type NumberingPlan } from '../sms/index.js';
import type { InboundPartRow } from '../store/entities.js';
import type { AdmitPart, InboundDelivery, InboundStore, NewInboundMessage, PartGroupKey, PartLimitName, StoredInbound } from '../store/sqlite/inbound-store.js';
import type { Async } from '../store/ports.js';
import type { InboundMessage } from '../transports/transport.js';
import { normalizeInboundAddress } from './address.js';
import { assembleParts, decodeOctets } from './assemble.js';
import { receiptRetentionMs } from '../smpp-customer/customer-cut.js';
import { inboundCustomerDeliveries } from '../smpp-customer/inbound-deliver-sm.js';
import { serializeInboundWebhook } from './inbound-webhook.js';
import { isOptoutText } from './optout-keywords.js';
import { DEFAULT_INBOUND_PART_LIMITS, partAdmission, type InboundPartLimits } from './part-limits.js';

/** An incomplete message is delivered as what arrived after 10 minutes. */
export const INBOUND_REASSEMBLY_TIMEOUT_MS = 10 * 60_000;
/** The sweep for overdue parts runs this often at most (and at least every tenth of the timeout), unless configured. */
const MAX_SWEEP_INTERVAL_MS = 30_000;
/**
 * A sweep slice: the groups of at most this many stale parts, or as many as fit in
 * SWEEP_SLICE_BUDGET_MS of work, become messages in one transaction (one commit); then the sweep
 * yields to the event loop. On SQLite the slice runs on the loop (better-sqlite3 is synchronous),
 * so the budget, plus one commit, is what a sweep may hold a loop turn for: well under 50 ms
 * however many groups are overdue.
 */
export const SWEEP_SLICE_PARTS = 200;
export const SWEEP_SLICE_BUDGET_MS = 8;
/** Refused parts are logged as one summary line at most this often. */
const REFUSAL_LOG_INTERVAL_MS = 10_000;

export interface InboundServiceOptions {
  /** The inbound store's port: each arrival is one of its methods, so one transaction. */
  store: Async<InboundStore>;
  logger: Logger;
  /** Called after a commit that queued an inbound webhook. */
  wakeWebhooks(): void;
  now?: () => number;
  reassemblyTimeoutMs?: number;
  /** How often overdue groups are swept; default a tenth of the timeout, at most 30 s. */
  sweepIntervalMs?: number;
  /** Bounds on parts held for incomplete groups (part-limits.ts); default DEFAULT_INBOUND_PART_LIMITS. */
  partLimits?: InboundPartLimits;
  /** How From and To numbers are normalised (config `numbering.country`); default Ireland's, SPEC "Recipient". */
  numbering?: NumberingPlan;
  /** Metrics hooks (src/admin): inbound parts and messages stored. */
  observer?: GatewayObserver;
  /** How long a message for an SMPP customer waits for it to bind (smppServer.receiptRetentionHours); default 72. */
  smppRetentionHours?: number;
  /** Called after a commit that stored deliver_sm rows for an SMPP customer (the delivery sender sends them). */
  wakeSmppDeliveries?(): void;
}

/** What receive() did with a message or part, for logs and tests. */
export type InboundOutcome =
  | { kind: 'part-stored'; stored: number; total: number }
  | { kind: 'part-repeated' }
  | { kind: 'message'; publicId: string; clientId: number | null; incomplete: boolean; optedOut: boolean; smpp?: true };

/** A message as read off the parts, before it is given its public id and routed to a client. */
type WholeMessage = Omit<NewInboundMessage, 'publicId' | 'clientId'>;

export class InboundService {
  private readonly store: Async<InboundStore>;
  private readonly now: () => number;
  private readonly timeoutMs: number;
  private readonly numbering: NumberingPlan;
  private readonly admit: AdmitPart;
  private readonly sweepIntervalMs: number;
  /** Parts refused since the last summary line, by the bound that refused them. */
  private refused: Record<PartLimitName, number> = { originator: 0, total: 0 };
  private refusalLoggedAtMs = Number.NEGATIVE_INFINITY;
  private sweepTimer: NodeJS.Timeout | null = null;
  private stopped = false;
  /** The sweep in progress: one at a time, so a slow store never stacks them up. */
  private sweeping: Promise<number> | undefined;

  constructor(private readonly options: InboundServiceOptions) {
    this.store = options.store;
    this.now = options.now ?? Date.now;
    this.timeoutMs = options.reassemblyTimeoutMs ?? INBOUND_REASSEMBLY_TIMEOUT_MS;
    this.numbering = options.numbering ?? numberingPlanFor();
    this.admit = partAdmission(options.partLimits ?? DEFAULT_INBOUND_PART_LIMITS);
    this.sweepIntervalMs = options.sweepIntervalMs ?? Math.min(MAX_SWEEP_INTERVAL_MS, Math.max(10, Math.floor(this.timeoutMs / 10)));
  }

  /**
   * Sweeps overdue parts now (left by a crash or a stop) and then periodically. Resolves at once:
   * the first sweep runs in the background, in slices, so a gateway restarted over thousands of
   * overdue groups listens and answers /health while it sweeps (sweep() returns the sweep in
   * progress, for callers that must wait for it). Never rejects (a failed sweep is logged and
   * retried at the next interval).
   */
  start(): Promise<void> {
    this.stopped = false;
    const sweepLogged = (): Promise<void> =>
      this.sweep().then(
        () => this.logRefusals(this.now()),
        (err: unknown) => this.options.logger.error({ err }, 'inbound reassembly sweep failed; retried at the next interval'),
      );
    void sweepLogged();
    this.sweepTimer = setInterval(() => void sweepLogged(), this.sweepIntervalMs);
    this.sweepTimer.unref();
    return Promise.resolve();
  }

  /** Stops the periodic sweep; a sweep in progress ends after its current slice. */
  stop(): void {
    this.stopped = true;
    if (this.sweepTimer !== null) clearInterval(this.sweepTimer);
    this.sweepTimer = null;
  }

  /**
   * Stores one message or part: committed when the promise resolves. The transport acknowledges
   * (deliver_sm_resp, AT+CMGD) only after that, so nothing acknowledged is lost to a crash.
   * Rejects with INBOUND_PARTS_LIMIT (retryable) when a part is over a bound (part-limits.ts):
   * nothing is stored and the transport asks for it again later.
   */
  async receive(transport: string, message: InboundMessage): Promise<InboundOutcome> {
    const nowMs = this.now();
    const sender = normalizeInboundAddress(message.from, this.numbering);
    const recipient = normalizeInboundAddress(message.to, this.numbering);
    const concat = message.concat;
    const isPart = concat !== undefined && concat.total > 1 && concat.sequence >= 1 && concat.sequence <= concat.total;
    let outcome: InboundOutcome;
    if (!isPart) {
      const text = message.content === undefined ? message.text : decodeOctets(message.content.coding, message.content.octetsHex);
      const delivery = this.delivery({ transport, sender, recipient, text, raw: message.raw, receivedAtMs: nowMs, incomplete: false });
      outcome = messageOutcome(await this.store.storeMessage(delivery, nowMs));
    } else {
      const key: PartGroupKey = { transport, sender, recipient, scheme: concat.scheme, reference: concat.reference, total: concat.total };
      const part = {
        sequence: concat.sequence,
        coding: message.content?.coding ?? 'gsm7',
        body: message.content?.octetsHex ?? message.text,
        raw: message.raw,
        received_at: nowMs,
      } as const;
      let missing: number[] = [];
      const stored = await this.store.storePart(key, part, (parts) => this.assembleRecording(key, parts, nowMs, (m) => (missing = m)), nowMs, this.admit);
      if (stored.kind === 'part-refused') throw this.refusal(key, stored.limit, nowMs);
      if (stored.kind === 'message') this.warnIfIncomplete(key, missing);
      outcome = stored.kind === 'message' ? messageOutcome(stored) : stored;
      if (outcome.kind !== 'part-repeated') (this.options.observer ?? NOOP_OBSERVER).inboundPart(transport);
    }
    this.afterCommit(transport, outcome);
    return outcome;
  }

  /** Delivers every message whose first part arrived timeoutMs or more ago, as what arrived. Returns how many. */
  sweep(): Promise<number> {
    this.sweeping ??= this.sweepOnce().finally(() => {
      this.sweeping = undefined;
    });
    return this.sweeping;
  }

  /**
   * In slices of SWEEP_SLICE_PARTS stale parts, one transaction each, yielding to the event loop
   * between them (loop-turns.ts), so /health and the transports are served while thousands of
   * groups are swept. One summary line per sweep, not one per message; the inbound webhooks are
   * outbox rows written with their messages, and the sender is woken once per slice.
   */
  private async sweepOnce(): Promise<number> {
    const nowMs = this.now();
    const cutoffMs = nowMs - this.timeoutMs;
    let delivered = 0;
    let incomplete = 0;
    let missingParts = 0;
    let slices = 0;
    for (;;) {
      let sliceMissing = 0;
      const swept = await this.store.completeStaleGroups(cutoffMs, SWEEP_SLICE_PARTS, (key, parts) => this.assembleRecording(key, parts, nowMs, (m) => {
        sliceMissing += m.length;
      }), nowMs, SWEEP_SLICE_BUDGET_MS);
      if (swept.length === 0) break;
      slices++;
      delivered += swept.length;
      incomplete += swept.filter((group) => group.stored.incomplete).length;
      missingParts += sliceMissing;
      const observer = this.options.observer ?? NOOP_OBSERVER;
      for (const group of swept) {
        observer.inboundMessage(group.key.transport, group.stored.incomplete);
        this.options.logger.debug({ transport: group.key.transport, outcome: messageOutcome(group.stored) }, 'inbound message stored by the reassembly sweep');
      }
      if (swept.some((group) => group.stored.clientId !== null && group.stored.smpp !== true)) this.options.wakeWebhooks();
      if (swept.some((group) => group.stored.smpp === true)) this.options.wakeSmppDeliveries?.();
      await yieldToEventLoop();
      if (this.stopped) break;
    }
    if (incomplete > 0) {
      this.options.logger.warn({ delivered, incomplete, missingParts, slices, reassemblyTimeoutMs: this.timeoutMs }, 'inbound messages incomplete after the reassembly timeout; delivered as what arrived, flagged incomplete');
    } else if (delivered > 0) {
      this.options.logger.info({ delivered, slices }, 'inbound reassembly sweep delivered messages');
    }
    return delivered;
  }

  /** The coded refusal of a part over a bound; logged as one summary line per REFUSAL_LOG_INTERVAL_MS. */
  private refusal(key: PartGroupKey, limit: PartLimitName, nowMs: number): GatewayError {
    this.refused[limit]++;
    this.logRefusals(nowMs);
    return new GatewayError('INBOUND_PARTS_LIMIT', `inbound part refused: over the ${limit === 'originator' ? 'per-originator' : 'total'} bound on parts of incomplete messages`, {
      retryable: true,
      details: { limit, transport: key.transport },
    });
  }

  /** The refusals not yet logged, as one line, when REFUSAL_LOG_INTERVAL_MS has passed since the last (also called after each sweep, so the last ones of a flood are logged too). */
  private logRefusals(nowMs: number): void {
    if (this.refused.originator + this.refused.total === 0 || nowMs - this.refusalLoggedAtMs < REFUSAL_LOG_INTERVAL_MS) return;
    this.options.logger.warn({ refused: this.refused }, 'inbound parts refused: incomplete messages hold as many parts as allowed (inbound.maxPartsPerOriginator, inbound.maxParts); the SMSC is asked to retry later');
    this.refused = { originator: 0, total: 0 };
    this.refusalLoggedAtMs = nowMs;
  }

  /**
   * The group's parts as one message. Runs inside the store's transaction, so it only computes;
   * the sequence numbers that never came go to `onMissing`, logged once the transaction is over.
   */
  private assembleRecording(key: PartGroupKey, parts: readonly InboundPartRow[], nowMs: number, onMissing: (missing: number[]) => void): InboundDelivery {
    const { text, missing } = assembleParts(parts, key.total);
    onMissing(missing);
    return this.delivery({
      transport: key.transport,
      sender: key.sender,
      recipient: key.recipient,
      text,
      raw: parts.map((part) => part.raw).join('\n'),
      // When the message became whole (its last part, or the timeout), not its first part: so
      // received_at only grows with storage order, and GET /v1/inbound?since= misses nothing.
      receivedAtMs: nowMs,
      incomplete: missing.length > 0,
    });
  }

  private warnIfIncomplete(key: PartGroupKey, missing: readonly number[]): void {
    if (missing.length === 0) return;
    this.options.logger.warn({ transport: key.transport, reference: key.reference, total: key.total, missing }, 'inbound message incomplete after the reassembly timeout; delivered as what arrived');
  }

  private delivery(message: WholeMessage): InboundDelivery {
    const publicId = randomUUID();
    return {
      message: { publicId, ...message },
      webhookBody: serializeInboundWebhook({
        messageId: publicId,
        from: message.sender,
        to: message.recipient,
        text: message.text,
        receivedAtMs: message.receivedAtMs,
        incomplete: message.incomplete,
      }),
      optsOut: (keywords) => isOptoutText(message.text, keywords),
      customerDeliveries: (accounts, nowMs) => inboundCustomerDeliveries(
        { publicId, from: message.sender, to: message.recipient, text: message.text }, accounts, nowMs,
        receiptRetentionMs(this.options.smppRetentionHours),
      ),
    };
  }

  private afterCommit(transport: string, outcome: InboundOutcome): void {
    const { logger } = this.options;
    if (outcome.kind !== 'message') {
      logger.debug({ transport, outcome }, 'inbound part stored');
      return;
    }
    (this.options.observer ?? NOOP_OBSERVER).inboundMessage(transport, outcome.incomplete);
    // Text is not logged (STYLE 12): only who and whether it was routed.
    logger.info({ transport, messageId: outcome.publicId, routed: outcome.clientId !== null, incomplete: outcome.incomplete, optedOut: outcome.optedOut }, 'inbound message stored');
    if (outcome.smpp === true) this.options.wakeSmppDeliveries?.();
    else if (outcome.clientId !== null) this.options.wakeWebhooks();
  }
}

function messageOutcome(stored: StoredInbound): InboundOutcome {
  const outcome: InboundOutcome = { kind: 'message', publicId: stored.publicId, clientId: stored.clientId, incomplete: stored.incomplete, optedOut: stored.optedOut };
  return stored.smpp === true ? { ...outcome, smpp: true } : outcome;
}

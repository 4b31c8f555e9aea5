/**
 * Store and forward towards SMPP customers: sends the waiting smpp_deliveries rows (receipts and
 * inbound messages) as deliver_sm on the account's receiver-capable binds of this node, until a
 * deliver_sm_resp with status 0 (SMPP 3.4 §4.6.2). A non-zero status or a lost session sends the
 * row again after a backoff (1 s doubling to 60 s); a row waits, in order per message (the store
 * leases only a message's oldest waiting row), until its expires_at.
 *
 * Wakes at once when a receiver binds and when this node wrote rows (wake()); polls every second
 * otherwise (rows another node wrote, on a PostgreSQL cluster); sweeps expired rows every minute.
 * Work in flight is bounded by the sessions' free window slots: never more leased than can be sent.
 */
import { backoffDelayMs } from '../engine/retry-policy.js';
import type { Logger } from '../common/log.js';
import type { LeasedDelivery, SmppDeliveryStore } from '../store/smpp-delivery-port.js';
import { parseDeliverSm, type DeliverResult, type DeliveringSession, type LocalSessions } from './contracts.js';

export interface DeliverySenderDeps {
  store: SmppDeliveryStore;
  sessions: LocalSessions;
  /** This node's id: the rows' lease stamp. */
  nodeId: string;
  now: () => number;
  logger: Logger;
  /** How long settled rows are kept before they are deleted (receiptRetentionHours). */
  retentionMs: number;
  /** Settings a test may shorten; the defaults are the documented ones. */
  timing?: Partial<DeliveryTiming>;
}

export interface DeliveryTiming {
  /** Looks for due rows this often when nothing woke the sender. */
  pollIntervalMs: number;
  /** Expires rows past their expires_at this often. */
  expireIntervalMs: number;
  /** A leased row is this node's for this long: longer than any response deadline. */
  leaseMs: number;
  /** The first retry's delay; doubled per attempt up to retryMaxDelayMs. */
  retryBaseDelayMs: number;
  retryMaxDelayMs: number;
}

export const DELIVERY_TIMING: Readonly<DeliveryTiming> = {
  pollIntervalMs: 1_000,
  expireIntervalMs: 60_000,
  leaseMs: 120_000,
  retryBaseDelayMs: 1_000,
  retryMaxDelayMs: 60_000,
};

/** Rows leased per account per pass at most (a window is 100 by default). */
const MAX_LEASE_PER_PASS = 500;

/** The delay before a row's next attempt after `attempts` failed ones (1 s, 2 s, 4 s ... 60 s). */
export function deliveryRetryDelayMs(attempts: number, timing: Pick<DeliveryTiming, 'retryBaseDelayMs' | 'retryMaxDelayMs'> = DELIVERY_TIMING): number {
  return backoffDelayMs(attempts, timing.retryBaseDelayMs, timing.retryMaxDelayMs);
}

export class DeliverySender {
  private readonly timing: DeliveryTiming;
  private running = false;
  private passing = false;
  /** The pass in progress, so stop() waits for what it leased to be sent. */
  private passDone: Promise<void> = Promise.resolve();
  private passAgain = false;
  private pollTimer: NodeJS.Timeout | undefined;
  private expireTimer: NodeJS.Timeout | undefined;
  private wakeScheduled = false;
  /** Deliveries on their way (their promises settle on a response, a deadline or a closed session). */
  private readonly inFlight = new Set<Promise<void>>();
  /** Acknowledged rows not yet marked delivered: written together once per tick. */
  private acked: number[] = [];
  private ackFlush: Promise<void> | undefined;

  /** Counters since start, for status and tests. */
  readonly counts = { delivered: 0, retried: 0, expired: 0, passes: 0 };

  constructor(private readonly deps: DeliverySenderDeps) {
    this.timing = { ...DELIVERY_TIMING, ...deps.timing };
    deps.sessions.onReceiverBound(() => this.wake());
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    this.pollTimer = setInterval(() => this.wake(), this.timing.pollIntervalMs);
    this.pollTimer.unref();
    this.expireTimer = setInterval(() => void this.expireNow(), this.timing.expireIntervalMs);
    this.expireTimer.unref();
    void this.expireNow();
    this.wake();
  }

  /** Stops leasing; resolves once the deliveries on their way settled and their outcomes are written. */
  async stop(): Promise<void> {
    this.running = false;
    clearInterval(this.pollTimer);
    clearInterval(this.expireTimer);
    await this.passDone;
    while (this.inFlight.size > 0 || this.ackFlush !== undefined || this.acked.length > 0) {
      await Promise.all([...this.inFlight]);
      await this.flushAcks();
    }
  }

  /**
   * Looks for due rows now (coalesced: many wakes in one tick make one pass). `accountId` names
   * the account that got rows; every account with a receiver here is looked at anyway.
   */
  wake(_accountId?: number): void {
    if (!this.running) return;
    if (this.passing) {
      this.passAgain = true;
      return;
    }
    if (this.wakeScheduled) return;
    this.wakeScheduled = true;
    setImmediate(() => {
      this.wakeScheduled = false;
      this.passDone = this.pass();
    });
  }

  /** Waiting rows past their expires_at are expired; settled rows older than the retention deleted. */
  async expireNow(): Promise<number> {
    try {
      const nowMs = this.deps.now();
      const expired = await this.deps.store.expire(nowMs);
      if (expired > 0) {
        this.counts.expired += expired;
        this.deps.logger.warn({ expired }, 'SMPP deliveries expired: the customer did not take them within the retention');
      }
      await this.deps.store.purgeDone(nowMs - this.deps.retentionMs);
      return expired;
    } catch (err) {
      this.deps.logger.error({ err }, 'SMPP deliveries: the expiry sweep failed; it runs again in a minute');
      return 0;
    }
  }

  private async pass(): Promise<void> {
    if (this.passing || !this.running) return;
    this.passing = true;
    try {
      do {
        this.passAgain = false;
        for (const accountId of this.deps.sessions.accountsWithReceivers()) {
          if (!this.running) break;
          await this.sendDue(accountId);
        }
      } while (this.passAgain && this.running);
    } catch (err) {
      this.deps.logger.error({ err }, 'SMPP deliveries: could not lease due rows; trying again at the next poll');
    } finally {
      this.passing = false;
      this.counts.passes++;
      // Acknowledgements no lease of this pass took with it (no free slot, no receiver left): written on their own.
      if (this.acked.length > 0) void this.flushAcks().catch((err: unknown) => this.deps.logger.error({ err }, 'SMPP deliveries: acknowledged rows not marked delivered; their leases run out and they are sent again'));
    }
  }

  /** Leases as many of the account's due rows as its sessions have free slots, and sends each. */
  private async sendDue(accountId: number): Promise<void> {
    const free = totalFreeSlots(this.deps.sessions.receiversOf(accountId));
    if (free <= 0) return;
    const nowMs = this.deps.now();
    // The acknowledgements gathered since the last write go in the lease's commit (one commit a pass, not two).
    const acknowledged = this.acked;
    this.acked = [];
    let rows: LeasedDelivery[];
    try {
      rows = await this.deps.store.leaseDue([accountId], this.deps.nodeId, Math.min(free, MAX_LEASE_PER_PASS), nowMs, nowMs + this.timing.leaseMs, acknowledged);
    } catch (err) {
      this.acked = acknowledged.concat(this.acked);
      throw err;
    }
    this.counts.delivered += acknowledged.length;
    const unsent: number[] = [];
    for (const row of rows) {
      // Read again per row: a session may have closed or filled its window during the lease.
      const session = roomiest(this.deps.sessions.receiversOf(accountId));
      if (session === undefined) unsent.push(row.id);
      else this.send(session, row);
    }
    if (unsent.length > 0) await this.deps.store.release(unsent);
  }

  private send(session: DeliveringSession, row: LeasedDelivery): void {
    let delivering: Promise<DeliverResult>;
    // Called now, not in a later tick: the session takes its window slot before the next row picks one.
    try {
      delivering = session.deliver(parseDeliverSm(row.deliverSm));
    } catch (err) {
      delivering = Promise.reject(err);
    }
    const sent = delivering
      .catch((err: unknown): DeliverResult => {
        this.deps.logger.warn({ err, deliveryId: row.id }, 'deliver_sm failed to go out: sent again later');
        return { kind: 'lost', reason: 'closed' };
      })
      .then((result) => this.settle(row, result))
      .catch((err: unknown) => this.deps.logger.error({ err, deliveryId: row.id }, 'SMPP delivery outcome not written: the lease runs out and it is sent again'))
      .finally(() => {
        this.inFlight.delete(sent);
        // A slot is free, and a message's next row may be due now that this one settled.
        this.wake();
      });
    this.inFlight.add(sent);
  }

  private async settle(row: LeasedDelivery, result: DeliverResult): Promise<void> {
    if (result.kind === 'acknowledged') {
      // Written by the pass this settle wakes (with its lease), or by flushAcks when that pass leases nothing.
      this.acked.push(row.id);
      if (!this.running) await this.flushAcks();
      return;
    }
    const attempts = row.attempts + 1;
    const nextAttemptAtMs = this.deps.now() + deliveryRetryDelayMs(attempts, this.timing);
    this.counts.retried++;
    this.deps.logger.info({ deliveryId: row.id, accountId: row.accountId, attempts, ...(result.kind === 'refused' ? { status: result.status } : { reason: result.reason }) },
      'deliver_sm not acknowledged: sent again later');
    await this.deps.store.retryLater(row.id, nextAttemptAtMs);
  }

  /** The acknowledged rows in one write (one per tick at most; later acks join the next). */
  private flushAcks(): Promise<void> {
    if (this.ackFlush !== undefined) return this.ackFlush.then(() => (this.acked.length > 0 ? this.flushAcks() : undefined));
    if (this.acked.length === 0) return Promise.resolve();
    const flush = (async () => {
      await new Promise<void>((resolve) => setImmediate(resolve));
      const ids = this.acked;
      this.acked = [];
      try {
        await this.deps.store.markDelivered(ids, this.deps.now());
        this.counts.delivered += ids.length;
      } finally {
        this.ackFlush = undefined;
      }
    })();
    this.ackFlush = flush;
    return flush;
  }
}

function totalFreeSlots(sessions: readonly DeliveringSession[]): number {
  return sessions.reduce((sum, s) => sum + Math.max(0, s.freeSlots), 0);
}

/** The session with the most free slots (spreads an account's rows over its binds); undefined when all are full. */
function roomiest(sessions: readonly DeliveringSession[]): DeliveringSession | undefined {
  let best: DeliveringSession | undefined;
  for (const s of sessions) if (s.freeSlots > 0 && (best === undefined || s.freeSlots > best.freeSlots)) best = s;
  return best;
}

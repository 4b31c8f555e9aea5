/**
 * Sends queued Delivery Receipts: reads due outbox rows, POSTs each body through its endpoint's
 * circuit breaker with bounded concurrency, and writes the result back (delivered, retry at, or dead
 * letter). The outbox is the only state that matters: a crash at any point leaves rows 'pending',
 * and the next start sends them again (at-least-once; SPEC "Events" point 8 makes receivers idempotent).
 *
 * Results are written in small batches (result-writer.ts) so a fast receiver does not cost one
 * synchronous commit per webhook; a crash before a flush only means a re-send. One attempt's request
 * is attempt.ts, the result its verdict makes is attempt-result.ts: this module schedules (reads,
 * queues, concurrency, passes, stop) and keeps the redrive bookkeeping.
 *
 * Dead letters of transient failures are redriven when their endpoint answers 2xx again:
 * the endpoint is probed once per breaker window while it has any, the probe being its
 * oldest redrivable dead letter re-sent alone (a real event, so a receiver sees nothing it would not
 * see anyway), and a 2xx from it, or from any other event to that endpoint, re-queues the rest, each
 * as a fresh series. Every request carries X-Event-Id, the row's stored UUID, so a receiver can
 * de-duplicate what retries, redrives and replays send again.
 *
 * The loop runs on a BackgroundWorker with keepScheduleOnWake: finished requests
 * and new rows wake it, and the outbox is re-read on the clock at least once per pollIntervalMs even
 * while wakes keep coming (rows queued by another process, such as `smsgate webhook replay`). A retry
 * written back asks for a pass at its due time (wakeAt), which shortens a sleep already running; the
 * next redrive probe bounds every sleep.
 *
 * The outbox is a port (outbox.ts): the SQLite file of one gateway (`store`, or
 * SqliteWebhookOutbox; answering synchronously), the same file seen from the sender thread
 * (SenderThreadOutbox), or a cluster node's share of a PostgreSQL outbox (PgWebhookOutbox): rows
 * leased to this node, results fenced on the lease (a refused one is counted in fencedResults and
 * changes nothing), results kept and written again while the database is unreachable. Where the
 * gateway runs it is gateway-sender.ts's decision.
 */
import { BackgroundWorker, type PassCause } from '../common/background-worker.js';
import { systemClock, type Clock } from '../common/clock.js';
import type { FailureLog } from '../common/failure-log.js';
import { NOOP_OBSERVER, type GatewayObserver } from '../gateway-observer.js';
import type { Logger } from '../common/log.js';
import type { SecretBox } from '../store/secret-box.js';
import type { SqliteDatabase } from '../store/sqlite/database.js';
import type { AttemptRecord, DueOutboxRow } from '../store/sqlite/webhook-store.js';
import { WEBHOOK_ERROR, sendAttempt, type AttemptDeps, type AttemptOutcome } from './attempt.js';
import { attemptResult } from './attempt-result.js';
import { DEFAULT_WEBHOOK_CONFIG, type WebhookSenderConfig } from './config.js';
import { EndpointBreakers } from './endpoint-breakers.js';
import { EndpointLogs } from './endpoint-logs.js';
import { outboxFailureLog, settle, type ProbeOutcome, type ResultsWritten, type UnleasedRead, type WebhookOutbox } from './outbox.js';
import { ResultWriter } from './result-writer.js';
import { SecretCache } from './secret-cache.js';
import { SqliteWebhookOutbox } from './sqlite/outbox.js';
import type { WebhookHttpClient } from './http-client.js';
import { createUndiciHttpClient } from './undici-http-client.js';
import type { AttemptVerdict } from './retry-policy.js';
import { RedriveSchedule, type RedriveTarget } from './redrive-schedule.js';

export { WEBHOOK_CONTENT_TYPE, EVENT_ID_HEADER, WEBHOOK_USER_AGENT, INBOUND_WEBHOOK_USER_AGENT, WEBHOOK_ERROR } from './attempt.js';

/**
 * Where the events are: `store`, the gateway's SQLite file (the default), or `outbox`, any
 * WebhookOutbox (a cluster node's PgWebhookOutbox on PostgreSQL).
 */
export type WebhookSenderOptions = WebhookSenderCommonOptions & (
  | { store: { readonly db: SqliteDatabase }; outbox?: undefined }
  | { outbox: WebhookOutbox; store?: undefined }
);

export interface WebhookSenderCommonOptions {
  secretBox: SecretBox;
  logger: Logger;
  config?: Partial<WebhookSenderConfig>;
  /** Clock for every stored time and retry schedule; default Date.now. Ignored when `clock` is given. */
  now?: () => number;
  /** Time and timers of the schedule: retries, polls, breaker windows, redrive probes. Default: the system clock. */
  clock?: Clock;
  /** Default: undici with keep-alive connections (createUndiciHttpClient; measured faster than node:http, README "Packages"). */
  httpClient?: WebhookHttpClient;
  /** How often due rows are looked for when nothing woke the sender (replays, retries of an earlier run). */
  pollIntervalMs?: number;
  /**
   * Results are written at most this long after the attempt ends, in one transaction (or sooner once
   * flushBatchRows are waiting). Each commit is a disk sync, so batching is what lets a fast receiver go fast.
   */
  flushIntervalMs?: number;
  flushBatchRows?: number;
  /** How long stop() waits for requests in flight; default timeoutMs + 1 s. */
  stopTimeoutMs?: number;
  /** Metrics hooks (src/admin); none by default. */
  observer?: GatewayObserver;
}

/**
 * What this sender did since it was built. delivered, retriesScheduled and deadLetters count the
 * results it made, when it made them: on PostgreSQL one of them may then be refused (fencedResults
 * counts those), the node holding the event counting it again when it sends it.
 */
export interface WebhookSenderStats {
  requests: number;
  delivered: number;
  retriesScheduled: number;
  deadLetters: number;
  circuitOpenFastFails: number;
  /** Dead letters re-queued by automatic redrive (probes not included). */
  redriven: number;
  /** Probes sent: dead letters re-sent alone to see whether their endpoint is back. */
  probes: number;
  /**
   * Results the outbox refused because this sender no longer held the row's lease (PostgreSQL: the
   * node expired and was reaped, or the lease lapsed and another node took the row). Each changed
   * nothing; the node holding the row sends it (same X-Event-Id). Always 0 on SQLite.
   */
  fencedResults: number;
}

/**
 * Added to a lease beyond the longest an event can take here (see leaseMs): a results write's round
 * trip, and a wait for a pooled connection under load.
 */
const LEASE_MARGIN_MS = 5_000;

/**
 * A leasing outbox is asked for at most what the request slots send in this many rounds (4 x
 * concurrency rows held, queued or in flight). Each claim is a database round trip, and claims run
 * one at a time: bigger claims are fewer round trips (5-7 ms each on the loaded 2-core machine),
 * smaller ones keep a lease short (see leaseMs). README "Benchmarks", bench:webhooks:pg.
 */
const CLAIM_ROUNDS = 4;

export class WebhookSender {
  private readonly outbox: WebhookOutbox;
  private readonly config: WebhookSenderConfig;
  private readonly clock: Clock;
  private readonly now: () => number;
  private readonly http: WebhookHttpClient;
  private readonly ownsHttpClient: boolean;
  private readonly breakers: EndpointBreakers;
  private readonly logger: Logger;
  private readonly pollIntervalMs: number;
  private readonly stopTimeoutMs: number;
  private readonly readBatchRows: number;
  /**
   * How long a leasing outbox (PostgreSQL) keeps a claimed event from other nodes. It must outlast
   * the longest a healthy node takes from the claim to the fenced write of the result, or another
   * node would take the event while its answer is on the way (a duplicate, allowed but avoidable):
   * a claimed row waits in the queue for at most CLAIM_ROUNDS - 1 rounds of requests ahead of it,
   * then its own request, each round at most timeoutMs, then the flush interval, then the write.
   * So CLAIM_ROUNDS x timeoutMs + flushIntervalMs + LEASE_MARGIN_MS: 45,025 ms with the defaults.
   * Long, but it only matters for a node that is alive and stuck: a node that dies or stalls past
   * its node lease (about 5 s) is reaped, and the reap releases its event leases at once
   * (src/store/postgres/node-takeover.ts).
   */
  private readonly leaseMs: number;

  private running = false;
  private closed = false;
  private stopping: Promise<void> | null = null;
  /** Rows read and not yet written back: queued here, in flight, or awaiting the next flush. */
  private readonly claimed = new Set<number>();
  private readonly queue: DueOutboxRow[] = [];
  private inFlight = 0;
  /** An outbox read answering later (PostgreSQL): no second one starts meanwhile. */
  private reading: Promise<void> | null = null;
  /** Outbox calls answering later (PostgreSQL), with what handles their answers: stop() waits for them. */
  private readonly calls = new Set<Promise<void>>();
  private readonly idleWaiters = new Set<() => void>();
  /** Attempt results on their way to the outbox. */
  private readonly results: ResultWriter;
  /** Runs pump(): on wake-ups, at retry due times, and once per poll interval by the clock. */
  private readonly worker: BackgroundWorker;
  private pumpScheduled = false;
  /**
   * Whether the outbox may hold due rows this sender has not read: set by wake() (new rows), by every
   * pass the clock brought (retries falling due, rows changed by another process such as `smsgate webhook replay`)
   * and by a flush (rows handed back); cleared once a read returned every due row. Without it each
   * finished request would re-read (and throw away) every row still claimed.
   */
  private outboxMayHaveNewRows = true;
  /**
   * An unleased outbox (SQLite) is read so that each row comes back about once, not once per read
   * while the sender holds it (every read used to return the rows in flight and awaiting their
   * write again: three rows read a webhook). A wake (rows committed, results written) reads only
   * the rows after this cursor, the highest id any read returned: ids are assigned in commit order
   * by the one writer, so those are the rows queued since. Rows pending again under an older id (a
   * retry falling due, a redrive, a replay by another process, a results write that failed) are
   * found by a full read, every due row but those held, which every pass the clock brings makes
   * (at least once per pollIntervalMs) and the events that set fullReadDue ask for. Null until a
   * read returned a row.
   */
  private readCursor: number | null = null;
  /** Whether the next read of an unleased outbox is a full one (see readCursor). */
  private fullReadDue = true;
  private readonly secrets: SecretCache;
  /** What one attempt needs (attempt.ts). */
  private readonly attemptDeps: AttemptDeps;
  private readonly counters: WebhookSenderStats = {
    requests: 0, delivered: 0, retriesScheduled: 0, deadLetters: 0, circuitOpenFastFails: 0, redriven: 0, probes: 0, fencedResults: 0,
  };
  /** The outbox unreachable (a PostgreSQL failover): one line per outage, not per call (outboxFailureLog). */
  private readonly outboxFailures: FailureLog;
  /** Breaker openings, closings and dead letters, summarised per endpoint (endpoint-logs.ts). */
  private readonly endpointLogs: EndpointLogs;
  /**
   * The last failure of each endpoint's attempts (ECONNREFUSED, TIMEOUT, HTTP_503), by breaker key:
   * what the breaker-opened line names as the cause. Kept only for endpoints that failed last; a
   * success deletes it, so it holds at most the endpoints now failing.
   */
  private readonly lastFailure = new Map<string, { clientId: number; url: string; cause: string }>();
  /** Endpoints with dead letters to redrive; null when redrive is off (redriveWithinMs 0). */
  private readonly redrive: RedriveSchedule | null;
  /** Rows re-queued as probes, by id, with the endpoint they stand for (its URL may have changed since). */
  private readonly probes = new Map<number, RedriveTarget>();
  /** Endpoints that answered 2xx since the last flush and whose dead letters are due for redrive. */
  private readonly recovered = new Map<string, RedriveTarget>();

  constructor(private readonly options: WebhookSenderOptions) {
    this.outbox = options.outbox ?? new SqliteWebhookOutbox(options.store.db);
    this.config = { ...DEFAULT_WEBHOOK_CONFIG, ...options.config };
    this.clock = options.clock ?? systemClock(options.now ?? Date.now);
    this.now = () => this.clock.now();
    this.redrive = this.config.redriveWithinMs > 0 ? new RedriveSchedule(this.config.breakerOpenMs) : null;
    this.ownsHttpClient = options.httpClient === undefined;
    this.http = options.httpClient ?? createUndiciHttpClient({ maxSockets: this.config.concurrency, timeoutMs: this.config.timeoutMs });
    this.logger = options.logger.child({ component: 'webhooks' });
    this.pollIntervalMs = options.pollIntervalMs ?? 200;
    const flushIntervalMs = options.flushIntervalMs ?? 25;
    this.stopTimeoutMs = options.stopTimeoutMs ?? this.config.timeoutMs + 1000;
    this.readBatchRows = Math.max(256, this.config.concurrency * 8);
    this.leaseMs = CLAIM_ROUNDS * this.config.timeoutMs + flushIntervalMs + LEASE_MARGIN_MS;
    this.outboxFailures = outboxFailureLog(this.logger, this.now);
    this.results = new ResultWriter({
      outbox: this.outbox,
      logger: this.logger,
      outboxFailures: this.outboxFailures,
      flushIntervalMs,
      flushBatchRows: options.flushBatchRows ?? 512,
      track: (call) => this.track(call),
      written: (batch, written, dropped) => this.afterWrite(batch, written, dropped),
    });
    this.secrets = new SecretCache(options.secretBox, this.logger);
    this.endpointLogs = new EndpointLogs(this.logger, this.now);
    this.breakers = new EndpointBreakers({
      failuresToOpen: this.config.breakerFailures,
      openMs: this.config.breakerOpenMs,
      now: this.now,
      onStateChange: (key, state) => {
        if (state === 'open') {
          const failure = this.lastFailure.get(key);
          const space = key.indexOf(' ');
          const endpoint = failure ?? { clientId: Number(key.slice(0, space)), url: key.slice(space + 1), cause: 'UNKNOWN' };
          this.endpointLogs.breakerOpened(key, endpoint, endpoint.cause, this.config.breakerOpenMs);
        } else if (state === 'closed') {
          this.endpointLogs.breakerClosed(key);
        }
        // half-open (a trial let through) is not news: its result opens or closes the breaker.
      },
    });
    this.attemptDeps = {
      outbox: this.outbox,
      secrets: this.secrets,
      breakers: this.breakers,
      http: this.http,
      timeoutMs: this.config.timeoutMs,
      onRequest: () => void (this.counters.requests += 1),
      onAnswer: (key, failure) => {
        if (failure === null) this.lastFailure.delete(key);
        else this.lastFailure.set(key, failure);
      },
    };
    this.worker = new BackgroundWorker({
      clock: this.clock,
      // A wake (a finished request) must not postpone the poll: see outboxMayHaveNewRows.
      keepScheduleOnWake: true,
      // As the sender always did: a poll or retry pump runs in the clock's timer, so a test stepping
      // the clock finds the requests it starts already under way.
      duePassInTimer: true,
      // The next poll, or the next redrive probe if that comes first.
      intervalMs: () => Math.max(0, Math.min(this.pollIntervalMs, (this.redrive?.nextProbeAtMs() ?? Number.POSITIVE_INFINITY) - this.now())),
      pass: (cause) => this.pass(cause),
    });
  }

  /** Starts sending; every row already pending and due (for example after a crash) is sent first. */
  start(): void {
    if (this.running || this.stopping !== null) return;
    this.running = true;
    this.trackDeadLettersFromEarlierRuns();
    // The first look is synchronous, as it always was: whenIdle() right after start() waits for it.
    this.pump();
    this.worker.start();
  }

  /** New rows were committed: look now rather than at the next poll. Cheap to call often. */
  wake(): void {
    this.outboxMayHaveNewRows = true;
    this.pumpSoon();
  }

  private pumpSoon(): void {
    if (!this.running || this.pumpScheduled) return;
    this.pumpScheduled = true;
    // One turn later, so requests finishing together are followed by one pass.
    setImmediate(() => {
      this.pumpScheduled = false;
      if (this.running) this.worker.wake();
    });
  }

  private pass(cause: PassCause): void {
    // start() already made the first pass.
    if (cause === 'start') return;
    // The clock brought this pass (a poll, a retry falling due): look at the outbox again.
    if (cause === 'due') this.rowsBelowCursorMayBeDue();
    this.endpointLogs.flush();
    this.pump();
  }

  /**
   * Stops taking rows, waits (at most stopTimeoutMs) for requests in flight, and writes their results.
   * Requests still unanswered at the bound stay 'pending' in the outbox and are sent again next start.
   */
  stop(): Promise<void> {
    if (this.stopping === null) this.stopping = this.shutdown();
    return this.stopping;
  }

  stats(): Readonly<WebhookSenderStats> {
    return { ...this.counters };
  }

  /** The breaker state of one endpoint, for tests and diagnostics. */
  breakerState(clientId: number, url: string): 'open' | 'half-open' | 'closed' {
    return this.breakers.state(EndpointBreakers.keyFor(clientId, url));
  }

  /** Resolves when nothing is queued, in flight or waiting to be written (rows due later may remain). */
  whenIdle(): Promise<void> {
    if (this.isIdle()) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.add(resolve));
  }

  private async shutdown(): Promise<void> {
    this.running = false;
    // pump() is synchronous, so no pass is running: the loop ends at once.
    const loopEnded = this.worker.stop();
    // A claim answering now finds the sender stopped and gives its rows back (refill).
    await this.callsSettled();
    const unsent = this.queue.splice(0);
    for (const row of unsent) this.claimed.delete(row.id);
    await this.giveBack(unsent);
    if (this.inFlight > 0) {
      let bound: NodeJS.Timeout | undefined;
      await Promise.race([
        new Promise<void>((resolve) => this.idleWaiters.add(resolve)),
        new Promise<void>((resolve) => { bound = setTimeout(resolve, this.stopTimeoutMs); }),
      ]);
      clearTimeout(bound);
      if (this.inFlight > 0) this.logger.warn({ inFlight: this.inFlight }, 'webhook requests still in flight at stop; they stay pending and are sent again on start');
    }
    // Results the outbox cannot take are tried again for at most this long, then left to be sent again.
    this.results.giveUpAfter(this.stopTimeoutMs);
    this.results.flush();
    while (this.results.writesInFlight > 0) await new Promise<void>((resolve) => this.idleWaiters.add(resolve));
    // Redrives the last results started: the caller may close the database once stop() resolves.
    await this.callsSettled();
    this.closed = true;
    this.breakers.shutdown();
    if (this.ownsHttpClient) this.http.close();
    for (const resolve of this.idleWaiters) resolve();
    this.idleWaiters.clear();
    await loopEnded;
  }

  private async callsSettled(): Promise<void> {
    while (this.calls.size > 0) await Promise.all([...this.calls]);
  }

  /**
   * settle() for the sender's outbox calls: true when answered synchronously (SQLite); one answering
   * later is kept in `calls` until its answer is handled.
   */
  private outboxCall<T>(call: () => T | Promise<T>, onValue: (value: T, deferred: boolean) => void, onError: (err: unknown, deferred: boolean) => void): boolean {
    const later = settle(call, onValue, onError);
    if (later === null) return true;
    this.track(later);
    return false;
  }

  private track(call: Promise<void>): void {
    const tracked: Promise<void> = call
      .catch((err: unknown) => this.logger.error({ err }, 'webhook sender failed handling an outbox answer'))
      .finally(() => this.calls.delete(tracked));
    this.calls.add(tracked);
  }

  /** Rows claimed that this sender will not send (it stops): a leasing outbox lets other nodes take them at once. */
  private async giveBack(rows: readonly DueOutboxRow[]): Promise<void> {
    if (rows.length === 0) return;
    try {
      await this.outbox.release(rows.map((r) => r.id));
    } catch (err) {
      this.logger.warn({ err, rows: rows.length }, 'giving back unsent webhook events failed; another node takes them when their lease ends');
    }
  }

  private isIdle(): boolean {
    return this.queue.length === 0 && this.inFlight === 0 && this.results.idle && this.reading === null;
  }

  private notifyIfIdle(): void {
    if (!this.isIdle()) return;
    for (const resolve of this.idleWaiters) resolve();
    this.idleWaiters.clear();
  }

  private pump(): void {
    if (!this.running) return;
    this.sendDueProbes();
    while (this.inFlight < this.config.concurrency) {
      if (this.queue.length === 0 && !this.refill()) break;
      this.startAttempt(this.queue.shift() as DueOutboxRow);
    }
    // A claim answering after a round trip is asked for before the queue runs dry, so the free slots
    // do not wait for it.
    if (this.outbox.leasesRows && this.queue.length < this.config.concurrency) this.refill();
    this.notifyIfIdle();
  }

  private startAttempt(row: DueOutboxRow): void {
    this.inFlight += 1;
    void this.attempt(row).catch((err: unknown) => {
      // Not expected (every outcome is recorded); the row stays pending and the next poll tries it again.
      this.logger.error({ err, outboxId: row.id }, 'webhook attempt failed unexpectedly');
      this.claimed.delete(row.id);
      this.rowsBelowCursorMayBeDue();
    }).finally(() => {
      this.inFlight -= 1;
      this.notifyIfIdle();
      this.pumpSoon();
    });
  }

  /**
   * Reads due rows not already claimed into the queue; false when none is there to send now. A read
   * answering later (PostgreSQL) fills the queue and pumps again when it does.
   */
  private refill(): boolean {
    if (!this.outboxMayHaveNewRows || this.reading !== null) return false;
    // A leasing outbox returns each row once: claim what the slots send in CLAIM_ROUNDS rounds, so
    // no row waits long under its lease (see leaseMs). An unleased one is read from the cursor, or
    // (a full read) for every due row but those held (see readCursor).
    const read: UnleasedRead | undefined = this.outbox.leasesRows ? undefined
      : this.fullReadDue || this.readCursor === null ? { kind: 'all-but', heldIds: this.claimed }
      : { kind: 'after', afterId: this.readCursor };
    const fullRead = read?.kind === 'all-but';
    const maxRows = this.outbox.leasesRows ? CLAIM_ROUNDS * this.config.concurrency - this.inFlight - this.queue.length : this.readBatchRows;
    // Cleared before the read: a wake (or a pass of the clock) while it is under way sets them again.
    this.outboxMayHaveNewRows = false;
    if (fullRead) this.fullReadDue = false;
    let readDone = (): void => undefined;
    const answered = this.outboxCall(() => this.outbox.claimDue(this.now(), maxRows, this.leaseMs, read),
      (rows, deferred) => {
        this.outboxFailures.recovered();
        // As many as asked for: more may be due, read next from where this read ended (a full read
        // again from the start, as it is ordered by due time). Fewer: every due row is now
        // claimed, so until something changes there is nothing to read.
        if (rows.length >= maxRows) {
          this.outboxMayHaveNewRows = true;
          if (fullRead) this.fullReadDue = true;
        }
        for (const row of rows) if (this.readCursor === null || row.id > this.readCursor) this.readCursor = row.id;
        if (deferred) {
          this.reading = null;
          readDone();
          // Stopping: shutdown() waits for the rows to be given back too.
          if (!this.running) {
            this.track(this.giveBack(rows));
            return;
          }
        }
        this.take(rows);
        if (deferred) this.pump();
      },
      (err, deferred) => {
        this.outboxMayHaveNewRows = true;
        if (fullRead) this.fullReadDue = true;
        this.outboxFailures.failed(err, { what: 'reading due events' });
        if (deferred) {
          this.reading = null;
          readDone();
          this.notifyIfIdle();
        }
      });
    if (!answered) this.reading = new Promise<void>((resolve) => { readDone = resolve; });
    return this.queue.length > 0;
  }

  /** Claimed rows into the queue, each once. */
  private take(rows: readonly DueOutboxRow[]): void {
    for (const row of rows) {
      if (this.claimed.has(row.id)) continue;
      this.claimed.add(row.id);
      this.queue.push(row);
    }
  }

  private async attempt(row: DueOutboxRow): Promise<void> {
    const outcome: AttemptOutcome = await sendAttempt(row, this.attemptDeps);
    const attempts = row.attempts + 1;
    switch (outcome.kind) {
      case 'unsendable':
        this.record(row, attempts, 'permanent', outcome.lastError);
        return;
      case 'circuit-open':
        this.counters.circuitOpenFastFails += 1;
        this.endpointLogs.held(outcome.key);
        this.record(row, attempts, 'transient', WEBHOOK_ERROR.circuitOpen);
        return;
      case 'answered':
        this.record(row, attempts, outcome.verdict, outcome.lastError);
    }
  }

  /** Endpoints with redrivable dead letters from before this start are probed at once. */
  private trackDeadLettersFromEarlierRuns(): void {
    const redrive = this.redrive;
    if (redrive === null) return;
    const nowMs = this.now();
    this.outboxCall(() => this.outbox.listRedriveEndpoints(nowMs - this.config.redriveWithinMs),
      (endpoints, deferred) => {
        for (const { clientId, url } of endpoints) redrive.track({ key: EndpointBreakers.keyFor(clientId, url), clientId, url }, nowMs);
        if (deferred && endpoints.length > 0) this.pumpSoon();
      },
      (err) => this.logger.error({ err }, 'reading webhook dead letters to redrive failed; they are redriven when their endpoints next answer 2xx'));
  }

  /**
   * Re-queues the oldest redrivable dead letter of each endpoint whose probe is due, alone, as the
   * probe. An endpoint whose breaker is open is probed when the breaker lets its trial through: a
   * probe then would only fail fast.
   */
  private sendDueProbes(): void {
    const redrive = this.redrive;
    if (redrive === null) return;
    const nowMs = this.now();
    if (redrive.nextProbeAtMs() > nowMs) return;
    for (const target of redrive.dueProbes(nowMs)) {
      const halfOpensAt = this.breakers.halfOpensAt(target.key);
      if (halfOpensAt !== null) {
        redrive.reschedule(target.key, halfOpensAt);
        continue;
      }
      // The next probe a window later, whatever this one finds: one answering later must not be asked for again meanwhile.
      redrive.reschedule(target.key, nowMs + this.config.breakerOpenMs);
      const filter = { clientId: target.clientId, url: target.url, cutoffMs: nowMs - this.config.redriveWithinMs };
      this.outboxCall(() => this.outbox.requeueProbe(filter, nowMs, this.leaseMs),
        (probe, deferred) => {
          this.outboxFailures.recovered();
          this.probeRequeued(target, probe);
          if (deferred) this.pump();
        },
        (err) => this.outboxFailures.failed(err, { what: 'requeueing a redrive probe', clientId: target.clientId }));
    }
  }

  private probeRequeued(target: RedriveTarget, probe: ProbeOutcome): void {
    switch (probe.kind) {
      case 'none-left':
        this.redrive?.forget(target.key);
        return;
      case 'in-flight':
        // Another node's probe of the endpoint is out: this one's comes a window later (sendDueProbes).
        return;
      case 'requeued':
        this.probes.set(probe.id, target);
        this.counters.probes += 1;
        if (probe.claimed === null) {
          this.rowsBelowCursorMayBeDue();
        } else if (this.running) {
          this.take([probe.claimed]);
        } else {
          this.probes.delete(probe.id);
          this.track(this.giveBack([probe.claimed]));
        }
    }
  }

  /** A 2xx from an endpoint: its dead letters are redriven at the next flush, after this result is written. */
  private noteAnswered(target: RedriveTarget, probeOf: RedriveTarget | undefined, atMs: number): void {
    if (this.redrive === null) return;
    if (probeOf !== undefined) {
      this.recovered.set(probeOf.key, probeOf);
      // The probe went to the client's URL as it is now; dead letters that died there come along.
      if (target.key !== probeOf.key && this.redrive.has(target.key)) this.recovered.set(target.key, target);
    } else if (this.redrive.shouldRedriveOnAnswer(target.key, atMs)) {
      this.recovered.set(target.key, target);
    }
  }

  private redriveRecovered(): void {
    const redrive = this.redrive;
    if (redrive === null || this.recovered.size === 0) return;
    const nowMs = this.now();
    const cutoffMs = nowMs - this.config.redriveWithinMs;
    for (const target of this.recovered.values()) {
      // On PostgreSQL one UPDATE takes each dead letter once: nodes redriving one endpoint together re-queue it once.
      this.outboxCall(() => this.outbox.redriveDeadLetters({ clientId: target.clientId, url: target.url, cutoffMs }, nowMs),
        (redriven, deferred) => {
          redrive.redriven(target.key, nowMs);
          this.counters.redriven += redriven;
          // The URL is not logged: it may carry credentials (user:password@).
          if (redriven > 0) this.logger.info({ clientId: target.clientId, redriven }, 'webhook endpoint answers again; its dead letters are re-queued');
          if (deferred && redriven > 0) this.wake();
        },
        // It stays tracked: the next probe, a window later, tries again.
        (err) => this.logger.error({ err, clientId: target.clientId }, 'redriving webhook dead letters failed'));
    }
    this.recovered.clear();
    this.rowsBelowCursorMayBeDue();
  }

  /** Rows may be due that a read from the cursor would not find (see readCursor): the next read is a full one. */
  private rowsBelowCursorMayBeDue(): void {
    this.outboxMayHaveNewRows = true;
    this.fullReadDue = true;
  }

  private record(row: DueOutboxRow, attempts: number, verdict: AttemptVerdict, lastError: string | null): void {
    // After stop() has written its last batch the store may be closed: a late answer is not written,
    // so its row stays pending and is sent again on the next start.
    if (this.closed) return;
    const atMs = this.now();
    const probeOf = this.probes.get(row.id);
    this.probes.delete(row.id);
    const url = row.webhookUrl === '' ? null : row.webhookUrl;
    const record = attemptResult({ id: row.id, attempts, verdict, lastError, url, probe: probeOf !== undefined, atMs }, this.config.retryDelaysMs);
    switch (record.kind) {
      case 'delivered':
        this.counters.delivered += 1;
        // Only while some endpoint waits for redrive: the common case costs one size check per 2xx.
        if (url !== null && this.redrive !== null && (probeOf !== undefined || this.redrive.size > 0)) {
          this.noteAnswered({ key: EndpointBreakers.keyFor(row.clientId, url), clientId: row.clientId, url }, probeOf, atMs);
        }
        break;
      case 'retry':
        this.counters.retriesScheduled += 1;
        break;
      case 'dead': {
        const { reason, lastError: error } = record;
        this.counters.deadLetters += 1;
        if (reason === 'transient' && url !== null && this.redrive !== null) {
          const key = EndpointBreakers.keyFor(row.clientId, url);
          this.redrive.deadLetter({ key, clientId: row.clientId, url }, atMs, this.breakers.halfOpensAt(key));
        }
        // Never silently dropped: the dead letter stays in the outbox for `smsgate webhook list --failed` and replay.
        const fields = { outboxId: row.id, eventId: row.eventId, clientId: row.clientId, recipientId: row.recipientId, attempts, lastError: error, reason };
        // A failed probe is the expected news while an endpoint is down (one per breaker window): info, not warn.
        // Other dead letters are summarised per endpoint (endpoint-logs.ts): counted into an open
        // breaker's lines, else the first logged and the rest counted, at most a line per interval.
        if (probeOf === undefined) this.endpointLogs.deadLetter(url === null ? null : EndpointBreakers.keyFor(row.clientId, url), { clientId: row.clientId, url: url ?? '' }, fields);
        else this.endpointLogs.probeFailed(url === null ? null : EndpointBreakers.keyFor(row.clientId, url), fields);
      }
    }
    const key = EndpointBreakers.keyFor(row.clientId, row.webhookUrl ?? '');
    const failedFast = record.kind !== 'delivered' && record.lastError === WEBHOOK_ERROR.circuitOpen;
    (this.options.observer ?? NOOP_OBSERVER).webhookAttempt(record.kind, record.kind === 'delivered' ? atMs - row.createdAt : undefined, {
      clientId: row.clientId,
      error: record.kind === 'delivered' || failedFast ? null : record.lastError,
      failedFast,
      breaker: this.breakers.state(key),
      halfOpensAtMs: this.breakers.halfOpensAt(key),
    });
    this.results.add(record);
  }

  /** Once a batch of results is written (or failed to be): its rows may be read again. */
  private afterWrite(batch: readonly AttemptRecord[], written: ResultsWritten, dropped: boolean): void {
    // Dropped results leave their rows pending and due under their old ids: the next read finds them.
    if (dropped) this.rowsBelowCursorMayBeDue();
    if (written.refusedIds.length > 0) {
      this.counters.fencedResults += written.refusedIds.length;
      this.logger.warn({ rows: written.refusedIds.length },
        'webhook results refused: this node no longer holds their leases, so they changed nothing (the node holding them sends those events)');
    }
    // After the batch is written, so dead letters recorded in it are redriven too.
    this.redriveRecovered();
    for (const r of batch) {
      this.claimed.delete(r.id);
      // A retry due before the next poll shortens the sleep (the spec's 2/4/8 s are kept to the clock).
      if (r.kind === 'retry' && this.running) this.worker.wakeAt(r.nextAttemptAt);
    }
    this.notifyIfIdle();
    this.wake();
  }
}

/**
 * The gateway's webhook sender on a worker thread (on SQLite: see sender-placement.ts): the one
 * WebhookSender runs in sender-worker.ts over the thread's outbox (sqlite/thread-outbox.ts), using
 * the second core for the HTTP requests, signatures and outbox reads, so webhooks keep pace with
 * submits instead of waiting for the engine's turns of the event loop. This side wakes it after the
 * engine's commits, writes the attempt results it sends back on the gateway's connection through
 * the same outbox contract (one hot writer), feeds the gateway's metrics and logger, and stops it.
 * Same surface as WebhookSender for the gateway: start(), wake(), stop().
 *
 * Durability is unchanged: a row is sent only after the commit that queued it (the wake follows the
 * commit), and counted delivered only once its result is written here.
 */
import { Worker } from 'node:worker_threads';
import pino from 'pino';
import { NOOP_OBSERVER, type GatewayObserver } from '../gateway-observer.js';
import type { Logger } from '../common/log.js';
import { workerEntry } from '../common/worker-entry.js';
import type { SqliteDatabase } from '../store/sqlite/database.js';
import type { FromSenderThread, SenderThreadData, ToSenderThread } from './sender-thread-protocol.js';
import { SqliteWebhookOutbox } from './sqlite/outbox.js';

/** sender-worker beside this module: compiled from dist/, the TypeScript source through its bootstrap otherwise (worker-entry.ts). */
const WORKER = workerEntry(import.meta.url, 'sender-worker');

/** The thread's V8 heap limits (see spawn). */
const SENDER_YOUNG_GENERATION_MB = 8;
const SENDER_OLD_GENERATION_MB = 64;

/**
 * The thread's log level: the gateway's, but never above warn. Its warn and error lines must reach
 * this side whatever the gateway's level, since the status page's recent errors record them even
 * when the log is quiet (src/admin/recent-errors.ts taps the gateway's logger); relogged here, they
 * are written or dropped by the gateway's own level.
 */
const WARN_LEVEL = pino.levels.values['warn'] ?? 40;

function relayedLogLevel(level: string): string {
  const value = pino.levels.values[level];
  return value === undefined || value > WARN_LEVEL ? 'warn' : level;
}

/** A crashed worker is started again after this long (its claimed rows are still pending and are sent again). */
const RESTART_DELAY_MS = 1_000;

export interface WebhookSenderThreadOptions extends SenderThreadData {
  /** The gateway's connection: attempt results are written here. */
  db: SqliteDatabase;
  logger: Logger;
  observer?: GatewayObserver;
}

export class WebhookSenderThread {
  private worker: Worker | undefined;
  private running = false;
  private stopping: Promise<void> | undefined;
  private restartTimer: NodeJS.Timeout | undefined;
  private readonly observer: GatewayObserver;
  /** Where the thread's results are written: the gateway's connection. */
  private readonly outbox: SqliteWebhookOutbox;

  constructor(private readonly options: WebhookSenderThreadOptions) {
    this.observer = options.observer ?? NOOP_OBSERVER;
    this.outbox = new SqliteWebhookOutbox(options.db);
  }

  /**
   * Always true: the thread runs from dist/ and from the TypeScript sources alike (worker-entry.ts).
   * Kept for callers that still ask; where the sender runs is senderPlacement's decision.
   */
  static available(): boolean {
    return true;
  }

  start(): void {
    if (this.running || this.stopping !== undefined) return;
    this.running = true;
    this.spawn();
  }

  /** New rows were committed: the thread looks now rather than at its next poll. */
  wake(): void {
    this.send({ type: 'wake' });
  }

  /** Asks the sender to stop (it waits for requests in flight, bounded) and waits for the thread to end. */
  stop(): Promise<void> {
    this.stopping ??= this.stopOnce();
    return this.stopping;
  }

  private async stopOnce(): Promise<void> {
    this.running = false;
    clearTimeout(this.restartTimer);
    const worker = this.worker;
    if (worker === undefined) return;
    const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
    this.send({ type: 'stop' });
    await exited;
  }

  private spawn(): void {
    const { db: _db, logger: _logger, observer: _observer, ...options } = this.options;
    const data: SenderThreadData = { ...options, logLevel: relayedLogLevel(options.logLevel) };
    // A small heap: the thread holds at most a few hundred rows and requests, all short-lived, and
    // V8's defaults for a new isolate cost the gateway's peak RSS some 30-60 MB (bench:e2e 100k:
    // 309-310 MB with them, 281 MB with these). Running out restarts the thread (see 'exit').
    const resourceLimits = { maxYoungGenerationSizeMb: SENDER_YOUNG_GENERATION_MB, maxOldGenerationSizeMb: SENDER_OLD_GENERATION_MB };
    const worker = new Worker(WORKER.url, { argv: WORKER.argv, workerData: data, resourceLimits });
    this.worker = worker;
    worker.on('message', (message: FromSenderThread) => this.onMessage(message));
    worker.on('error', (err) => this.options.logger.error({ err }, 'webhook sender thread failed'));
    worker.on('exit', (code) => {
      if (this.worker === worker) this.worker = undefined;
      if (!this.running) return;
      this.options.logger.error({ code, restartInMs: RESTART_DELAY_MS }, 'webhook sender thread ended unexpectedly; starting it again (its events in flight are sent again)');
      this.restartTimer = setTimeout(() => {
        if (this.running) this.spawn();
      }, RESTART_DELAY_MS);
    });
  }

  private send(message: ToSenderThread): void {
    this.worker?.postMessage(message);
  }

  private onMessage(message: FromSenderThread): void {
    switch (message.type) {
      case 'results': {
        let error: string | undefined;
        try {
          this.outbox.recordAttempts(message.records);
        } catch (err) {
          error = err instanceof Error ? err.message : String(err);
        }
        // Counted only once written, as the in-process sender counts at its flush.
        if (error === undefined) for (const a of message.attempts) this.observer.webhookAttempt(a.result, a.lagMs, a.detail);
        this.send(error === undefined ? { type: 'written', id: message.id } : { type: 'written', id: message.id, error });
        return;
      }
      case 'log':
        this.relog(message.line);
        return;
      case 'stopped':
        return;
    }
  }

  /** A pino line of the thread's logger, logged again through the gateway's (its metrics and recent errors see it). */
  private relog(line: string): void {
    let record: Record<string, unknown>;
    try {
      record = JSON.parse(line) as Record<string, unknown>;
    } catch {
      return;
    }
    const { level, msg, time: _time, pid: _pid, hostname: _hostname, service: _service, ...fields } = record;
    const label = typeof level === 'number' ? this.options.logger.levels.labels[level] : undefined;
    const log = this.options.logger;
    const text = typeof msg === 'string' ? msg : '';
    switch (label) {
      case 'fatal':
        log.fatal(fields, text);
        return;
      case 'error':
        log.error(fields, text);
        return;
      case 'warn':
        log.warn(fields, text);
        return;
      case 'debug':
        log.debug(fields, text);
        return;
      case 'trace':
        log.trace(fields, text);
        return;
      default:
        log.info(fields, text);
    }
  }
}

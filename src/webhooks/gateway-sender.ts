/**
 * The gateway's webhook sender, built for its backend: the one place that decides where the sender
 * runs (senderPlacement) and builds it (createGatewayWebhookSender). Either way it is the one
 * WebhookSender over the outbox contract (outbox.ts); the thread is only a shell around it.
 */
import type { GatewayObserver } from '../gateway-observer.js';
import type { Logger } from '../common/log.js';
import type { NodeIdSource } from '../common/node-id.js';
import type { PgWebhookStore } from '../store/postgres/webhook-store.js';
import type { SecretBox } from '../store/secret-box.js';
import type { SqliteDatabase } from '../store/sqlite/database.js';
import type { WebhookSenderConfig } from './config.js';
import { PgWebhookOutbox } from './postgres/outbox.js';
import { WebhookSenderThread } from './sender-thread.js';
import { SqliteWebhookOutbox } from './sqlite/outbox.js';
import { WebhookSender } from './webhook-sender.js';

/** Where the sender runs: on a worker thread of its own, or on the gateway's event loop. */
export type SenderPlacement = 'worker-thread' | 'in-process';

/**
 * Where a gateway's sender runs:
 *  - SQLite: on a worker thread. The engine's SQLite work is synchronous on the main thread (its
 *    fast path commits in the loop), so requests, signing and outbox reads there would wait for
 *    its turns and hold them up; the thread puts them on the second core and reads through its own
 *    connection, while the results are written on the gateway's (one hot writer, thread-outbox.ts).
 *    Except with an injected clock (`now`, tests that step time): a function cannot cross to a
 *    thread, so that sender runs in process, on the same code.
 *  - PostgreSQL: in process, over PgWebhookOutbox. Every outbox call is a round trip that does not
 *    hold the event loop, and the outbox fences on the node id the cluster runtime holds in this
 *    thread (it changes when a fenced-out node rejoins); a thread would add a hop to every claim
 *    and write for no core the loop needs back.
 */
export function senderPlacement(backend: 'sqlite' | 'postgres', clockInjected: boolean): SenderPlacement {
  if (backend === 'postgres') return 'in-process';
  return clockInjected ? 'in-process' : 'worker-thread';
}

interface CommonSetup {
  secretBox: SecretBox;
  /** The sender's logger (the gateway's, with part: 'webhooks'). */
  logger: Logger;
  config: Partial<WebhookSenderConfig> | undefined;
  /** An injected clock: keeps a SQLite gateway's sender in process (see senderPlacement). */
  now?: () => number;
  observer?: GatewayObserver;
}

export type GatewaySenderSetup = CommonSetup & (
  | {
      backend: 'sqlite';
      /** The gateway's connection: results are written here. */
      db: SqliteDatabase;
      /** The database file, opened again by the thread; and the key file its secrets open with. */
      databasePath: string;
      keyFile: string;
    }
  | { backend: 'postgres'; store: PgWebhookStore; node: NodeIdSource }
);

/** What the gateway holds: start(), wake() after commits, stop(). */
export type GatewayWebhookSender = WebhookSender | WebhookSenderThread;

/** Busy timeout of the thread's own connection (its rare writes: event ids, redrives). */
const THREAD_BUSY_TIMEOUT_MS = 5_000;

/** Builds the gateway's sender where senderPlacement puts it. */
export function createGatewayWebhookSender(setup: GatewaySenderSetup): GatewayWebhookSender {
  const { secretBox, logger, config, now, observer } = setup;
  const placement = senderPlacement(setup.backend, now !== undefined);
  if (setup.backend === 'sqlite' && placement === 'worker-thread') {
    return new WebhookSenderThread({
      db: setup.db,
      databasePath: setup.databasePath,
      busyTimeoutMs: THREAD_BUSY_TIMEOUT_MS,
      keyFile: setup.keyFile,
      config: config ?? {},
      logLevel: logger.level,
      logger,
      ...(observer === undefined ? {} : { observer }),
    });
  }
  const outbox = setup.backend === 'postgres' ? new PgWebhookOutbox(setup.store, setup.node) : new SqliteWebhookOutbox(setup.db);
  return new WebhookSender({ outbox, secretBox, logger, config, ...(now === undefined ? {} : { now }), ...(observer === undefined ? {} : { observer }) });
}

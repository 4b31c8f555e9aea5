/**
 * The webhook sender thread's entry: a shell around the one WebhookSender, over the outbox of the
 * thread (sqlite/thread-outbox.ts: reads on this thread's own connection, attempt results written
 * by the gateway on its connection). The HTTP requests, their signing and the outbox reads run on
 * the second core, beside the engine instead of between its submits and receipts. This file only
 * carries messages (sender-thread-protocol.ts): wakes and stop in, results, metrics and log lines out.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { NOOP_OBSERVER } from '../gateway-observer.js';
import { createLogger } from '../common/log.js';
import { SecretBox } from '../store/secret-box.js';
import { openSenderConnection, type AttemptRecord } from '../store/sqlite/webhook-store.js';
import type { ObservedAttempt, FromSenderThread, SenderThreadData, ToSenderThread } from './sender-thread-protocol.js';
import { SqliteWebhookOutbox } from './sqlite/outbox.js';
import { SenderThreadOutbox } from './sqlite/thread-outbox.js';
import { WebhookSender } from './webhook-sender.js';

const port = parentPort;
if (port === null) throw new Error('sender-worker runs only as a worker thread (see sender-thread.ts)');
const data = workerData as SenderThreadData;
const post = (message: FromSenderThread): void => port.postMessage(message);

const db = openSenderConnection(data.databasePath, data.busyTimeoutMs);

/**
 * The thread's results go to the gateway at most this often (the in-process sender's 25 ms flush
 * otherwise): each batch is one transaction on the gateway's main thread, between its submits and
 * receipts, and four times fewer of them, each four times larger, cost that thread fewer commits
 * and WAL pages (neighbouring rows share pages). What it risks is only what a lost "delivered"
 * mark costs: after a crash, the events of the last 100 ms are sent again (at-least-once, with the
 * same X-Event-Id).
 */
const RESULTS_FLUSH_INTERVAL_MS = 100;
const logger = createLogger({ level: data.logLevel, destination: { write: (line: string) => post({ type: 'log', line }) } });

/** Attempts since the last results batch: they travel with it, counted by the gateway once written. */
let observed: ObservedAttempt[] = [];
let nextBatchId = 1;
const waitingForWrite = new Map<number, { resolve: () => void; reject: (err: Error) => void }>();

const writeOnGateway = (records: readonly AttemptRecord[]): Promise<void> =>
  new Promise<void>((resolve, reject) => {
    const id = nextBatchId++;
    waitingForWrite.set(id, { resolve, reject });
    const attempts = observed;
    observed = [];
    post({ type: 'results', id, records: [...records], attempts });
  });

const sender = new WebhookSender({
  outbox: new SenderThreadOutbox(new SqliteWebhookOutbox(db), writeOnGateway),
  secretBox: SecretBox.fromKeyFile(data.keyFile),
  logger,
  config: data.config,
  flushIntervalMs: RESULTS_FLUSH_INTERVAL_MS,
  // Metrics are the gateway's: each attempt travels with its results batch.
  observer: { ...NOOP_OBSERVER, webhookAttempt: (result, lagMs, detail) => void observed.push({ result, lagMs, ...(detail === undefined ? {} : { detail }) }) },
});

port.on('message', (message: ToSenderThread) => {
  switch (message.type) {
    case 'wake':
      sender.wake();
      return;
    case 'written': {
      const waiter = waitingForWrite.get(message.id);
      waitingForWrite.delete(message.id);
      if (message.error === undefined) waiter?.resolve();
      else waiter?.reject(new Error(message.error));
      return;
    }
    case 'stop':
      void sender.stop().finally(() => {
        db.close();
        post({ type: 'stopped' });
        port.close();
      });
      return;
  }
});

sender.start();

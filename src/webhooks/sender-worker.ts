/**
 * The webhook sender thread's entry (use the second core). It runs the same
 * WebhookSender as the in-process one, reading due outbox rows through its own SQLite connection
 * (WAL lets it read while the gateway writes), so the HTTP requests, their signing and the outbox
 * reads run beside the engine instead of between its submits and receipts.
 *
 * The hot write, attempt results, goes back to the gateway, which writes it on its own connection:
 * the database keeps one writer on the hot path, so no transaction elsewhere in the gateway (most
 * begin by reading) meets a commit from this thread between its read and its write
 * (SQLITE_BUSY_SNAPSHOT). Rows stay claimed here until the gateway says they are written.
 * Rare writes (a missing event id, redrive of dead letters) use this thread's connection and its
 * busy timeout, as the webhook CLI commands do from their own processes.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { NOOP_OBSERVER } from '../gateway-observer.js';
import { createLogger } from '../common/log.js';
import { SecretBox } from '../store/secret-box.js';
import { openSenderConnection, type AttemptRecord } from '../store/sqlite/webhook-store.js';
import type { ObservedAttempt, FromSenderThread, SenderThreadData, ToSenderThread } from './sender-thread-protocol.js';
import { WebhookSender } from './webhook-sender.js';

const port = parentPort;
if (port === null) throw new Error('sender-worker.js runs only as a worker thread (see sender-thread.ts)');
const data = workerData as SenderThreadData;
const post = (message: FromSenderThread): void => port.postMessage(message);

const db = openSenderConnection(data.databasePath, data.busyTimeoutMs);
const logger = createLogger({ level: data.logLevel, destination: { write: (line: string) => post({ type: 'log', line }) } });

let observed: ObservedAttempt[] = [];
let nextBatchId = 1;
const waitingForWrite = new Map<number, { resolve: () => void; reject: (err: Error) => void }>();

const sender = new WebhookSender({
  store: { db },
  secretBox: SecretBox.fromKeyFile(data.keyFile),
  logger,
  config: data.config,
  // Metrics are the gateway's: each attempt travels with its results batch.
  observer: { ...NOOP_OBSERVER, webhookAttempt: (result, lagMs, detail) => void observed.push({ result, lagMs, ...(detail === undefined ? {} : { detail }) }) },
  writeResults: (records: readonly AttemptRecord[]) =>
    new Promise<void>((resolve, reject) => {
      const id = nextBatchId++;
      waitingForWrite.set(id, { resolve, reject });
      const attempts = observed;
      observed = [];
      post({ type: 'results', id, records: [...records], attempts });
    }),
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

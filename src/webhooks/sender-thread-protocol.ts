/**
 * The messages between the gateway and its webhook sender thread (sender-thread.ts, sender-worker.ts).
 * Structured-clone data only: no functions, no class instances.
 */
import type { WebhookAttemptDetail, WebhookAttemptResult } from '../gateway-observer.js';
import type { AttemptRecord } from '../store/sqlite/webhook-store.js';
import type { WebhookSenderConfig } from './config.js';

/** What the worker needs to build its WebhookSender (workerData). */
export interface SenderThreadData {
  databasePath: string;
  busyTimeoutMs: number;
  keyFile: string;
  config: Partial<WebhookSenderConfig>;
  logLevel: string;
}

/** One attempt as the gateway's metrics see it (GatewayObserver.webhookAttempt). */
export interface ObservedAttempt {
  result: WebhookAttemptResult;
  lagMs: number | undefined;
  detail?: WebhookAttemptDetail;
}

export type ToSenderThread =
  | { type: 'wake' }
  | { type: 'stop' }
  /** The results batch `id` is written (or failed: `error`); its rows may be read again. */
  | { type: 'written'; id: number; error?: string };

export type FromSenderThread =
  /** Attempt results for the gateway to write on its connection (the one hot writer). */
  | { type: 'results'; id: number; records: AttemptRecord[]; attempts: ObservedAttempt[] }
  /** One pino line of the sender's logger, re-logged by the gateway's logger. */
  | { type: 'log'; line: string }
  | { type: 'stopped' };

/**
 * The dispatch engine's settings (config file section `engine`) and their defaults. The config
 * module validates the section; this module owns what each number means.
 */
import { DEFAULT_RECEIPT_RETENTION_HOURS } from '../smpp-customer/customer-cut.js';

export interface EngineConfig {
  /** Recipients turned into message parts per scheduler transaction, and parts claimed per feed. */
  batchSize: number;
  /** How often the scheduler looks for due work when nothing woke it. */
  pollIntervalMs: number;
  /** Submit attempts per part (the first one included) before a temporary failure becomes final. */
  maxAttempts: number;
  /** Delay after the first temporary failure; doubles per attempt (see nextRetryAt). */
  retryBaseDelayMs: number;
  retryMaxDelayMs: number;
  /** A receipt whose message id matches no part is kept this long for a late submit_sm_resp, then expired. */
  unmatchedReceiptTtlMs: number;
  /** How long a clean stop waits for submits already handed to a transport. */
  drainTimeoutMs: number;
  /**
   * How long a receipt for an SMPP customer waits for it to bind before it expires (the
   * smppServer section's receiptRetentionHours). Optional: absent, ENGINE_DEFAULTS' 72 hours.
   */
  receiptRetentionHours?: number;
}

export const ENGINE_DEFAULTS: Readonly<EngineConfig> = {
  batchSize: 500,
  pollIntervalMs: 200,
  maxAttempts: 5,
  retryBaseDelayMs: 2_000,
  retryMaxDelayMs: 300_000,
  unmatchedReceiptTtlMs: 172_800_000,
  drainTimeoutMs: 10_000,
  receiptRetentionHours: DEFAULT_RECEIPT_RETENTION_HOURS,
};

export function resolveEngineConfig(section: Partial<EngineConfig> | undefined): EngineConfig {
  return { ...ENGINE_DEFAULTS, ...(section ?? {}) };
}

/**
 * The `webhooks` config section (defaults per SPEC "Events": 2/4/8 s retries, breaker open 30 s
 * after two transient failures). src/config validates the file; this is the shape the sender reads.
 */
export interface WebhookSenderConfig {
  /** Per request, until the response status line arrives. */
  timeoutMs: number;
  /** One delay per retry, each counted from the failure before it. */
  retryDelaysMs: number[];
  /** How long an endpoint's breaker stays open before one probe request is let through. */
  breakerOpenMs: number;
  /** Consecutive transient failures of one endpoint that open its breaker. */
  breakerFailures: number;
  /** Requests in flight at once, over all endpoints. */
  concurrency: number;
  /**
   * Automatic redrive: dead letters of transient failures created no longer ago
   * than this are re-queued when their endpoint answers 2xx again. 0 turns redrive off.
   */
  redriveWithinMs: number;
}

export const DEFAULT_WEBHOOK_CONFIG: Readonly<WebhookSenderConfig> = Object.freeze({
  timeoutMs: 10_000,
  retryDelaysMs: [2_000, 4_000, 8_000],
  breakerOpenMs: 30_000,
  breakerFailures: 2,
  concurrency: 16,
  redriveWithinMs: 86_400_000,
});

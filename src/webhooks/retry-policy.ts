/**
 * What a webhook attempt's result means, and when the next attempt is due. Pure: time is an input.
 *
 * SPEC "Events" points 4-6: any 2xx acknowledges; network failures, 404, 408 and 5xx are retried;
 * other 4xx (400, 401, 403...) are not; up to three retries, about 2 s after the first failure,
 * 4 s after the previous failure, 8 s after the previous failure.
 */

export type AttemptVerdict = 'delivered' | 'transient' | 'permanent';

/** 4xx statuses the spec names as retryable; every other 4xx is a permanent refusal. */
export const RETRYABLE_4XX: ReadonlySet<number> = new Set([404, 408]);

/**
 * The verdict on an HTTP response status. 3xx is permanent: redirects are not followed (a receipt
 * must not be posted to an address the client did not configure), and retrying will not change it.
 */
export function classifyHttpStatus(statusCode: number): AttemptVerdict {
  if (statusCode >= 200 && statusCode <= 299) return 'delivered';
  if (statusCode >= 500 && statusCode <= 599) return 'transient';
  if (RETRYABLE_4XX.has(statusCode)) return 'transient';
  return 'permanent';
}

/**
 * When the next attempt is due after `attemptsMade` failed attempts (1 = the first attempt failed),
 * or null when the retries are exhausted and the event becomes a dead letter. Each delay counts from
 * the failure just seen (nowMs), as the spec's "after the previous failure" says.
 */
export function nextWebhookAttemptAt(attemptsMade: number, nowMs: number, retryDelaysMs: readonly number[]): number | null {
  if (!Number.isInteger(attemptsMade) || attemptsMade < 1) throw new RangeError(`attemptsMade must be an integer >= 1, got ${attemptsMade}`);
  const delayMs = retryDelaysMs[attemptsMade - 1];
  return delayMs === undefined ? null : nowMs + delayMs;
}

/** The most attempts an event gets: the first one plus one per retry delay. */
export function maxWebhookAttempts(retryDelaysMs: readonly number[]): number {
  return retryDelaysMs.length + 1;
}

import { describe, expect, it } from 'vitest';
import { classifyHttpStatus, DEFAULT_WEBHOOK_CONFIG, maxWebhookAttempts, nextWebhookAttemptAt } from '../../src/webhooks/index.js';

describe('webhook retry policy (SPEC Events points 4-6)', () => {
  it.each([200, 201, 202, 204, 299])('%i acknowledges', (status) => {
    expect(classifyHttpStatus(status)).toBe('delivered');
  });
  it.each([404, 408, 500, 502, 503, 504, 599])('%i is transient (retried)', (status) => {
    expect(classifyHttpStatus(status)).toBe('transient');
  });
  it.each([400, 401, 403, 405, 409, 410, 413, 422, 429, 499, 301, 302, 307, 308, 100, 600])('%i is permanent (not retried)', (status) => {
    expect(classifyHttpStatus(status)).toBe('permanent');
  });

  it('schedules retries about 2 s, 4 s and 8 s after each failure, then gives up', () => {
    const delays = DEFAULT_WEBHOOK_CONFIG.retryDelaysMs;
    expect(delays).toEqual([2000, 4000, 8000]);
    expect(nextWebhookAttemptAt(1, 1_000_000, delays)).toBe(1_002_000);
    expect(nextWebhookAttemptAt(2, 1_002_500, delays)).toBe(1_006_500);
    expect(nextWebhookAttemptAt(3, 1_007_000, delays)).toBe(1_015_000);
    expect(nextWebhookAttemptAt(4, 1_015_000, delays)).toBeNull();
    expect(maxWebhookAttempts(delays)).toBe(4);
  });

  it('takes injected delays and rejects an attempt count below 1', () => {
    expect(nextWebhookAttemptAt(1, 0, [20, 40, 80])).toBe(20);
    expect(nextWebhookAttemptAt(3, 100, [20, 40, 80])).toBe(180);
    expect(nextWebhookAttemptAt(1, 0, [])).toBeNull();
    expect(() => nextWebhookAttemptAt(0, 0, [20])).toThrow(RangeError);
  });

  it('uses the spec defaults for the breaker and concurrency', () => {
    expect(DEFAULT_WEBHOOK_CONFIG).toMatchObject({ breakerOpenMs: 30_000, breakerFailures: 2, timeoutMs: 10_000, concurrency: 16 });
  });
});

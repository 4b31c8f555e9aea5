/**
 * The SMPP transport's link counters behind smsgate_bind_attempts_total and
 * smsgate_bind_failures_total, over real TCP: a bind to a port nothing listens on fails with
 * SMPP_CONNECT_FAILED on each attempt, and each failure is counted under that coded reason.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { SmppTransport } from '../../src/transports/smpp/index.js';
import { freePort } from '../support/free-port.js';
import { recorder } from '../transports/smpp/helpers.js';

let transport: SmppTransport | undefined;
afterEach(async () => {
  await transport?.stop(0);
  transport = undefined;
});

describe('SMPP link counters', () => {
  it('count every refused connection as a bind attempt failed with SMPP_CONNECT_FAILED', async () => {
    const port = await freePort();
    transport = new SmppTransport({
      name: 'closed', type: 'smpp', host: '127.0.0.1', port, systemId: 'esme', password: 'secret', bindMode: 'transceiver',
      maxPerSecond: 10, responseTimeoutMs: 1_000, reconnect: { initialDelayMs: 20, maxDelayMs: 50 },
    });
    transport.setHandlers(recorder());
    await transport.start();
    const deadline = Date.now() + 20_000;
    while ((transport.linkCounters().bindFailures.get('SMPP_CONNECT_FAILED') ?? 0) < 3) {
      if (Date.now() > deadline) throw new Error('three refused connections were not counted within 20 s');
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    const counts = transport.linkCounters();
    expect([...counts.bindFailures.keys()]).toEqual(['SMPP_CONNECT_FAILED']);
    // Each attempt that has ended failed; one more may be under way.
    expect(counts.bindAttempts - (counts.bindFailures.get('SMPP_CONNECT_FAILED') ?? 0)).toBeLessThanOrEqual(1);
    expect(counts.sessionsLost).toBe(0);
    expect(transport.links().map((l) => l.state)).not.toContain('bound');
  });
});

/**
 * The admin's small parts on their own: the recent-errors tap (child bindings kept, secrets and
 * bodies left out, bounded), HTML escaping, the cross-site check, receipt status labels, and two
 * gateways' metrics in one process without a clash.
 */
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { constantTimeEqual, crossSiteReason } from '../../src/admin/admin-app.js';
import { GatewayMetrics, receiptStatusLabel } from '../../src/admin/gateway-metrics.js';
import { RecentErrors, tapLogger } from '../../src/admin/recent-errors.js';
import { escapeHtml } from '../../src/admin/status-page.js';
import { TransportActivity } from '../../src/admin/transport-activity.js';
import { openStore } from '../../src/store/sqlite/database.js';
import { sqliteStorePorts } from '../../src/store/store-ports.js';

describe('recent errors', () => {
  it('records warn and error events with the bindings of every child, and still logs them', () => {
    const lines: string[] = [];
    const logger = pino({ level: 'info' }, new Writable({ write: (chunk: Buffer, _enc, done) => { lines.push(chunk.toString()); done(); } }));
    const sink = new RecentErrors(3, () => 1_000);
    const tapped = tapLogger(logger, sink).child({ transport: 'carrier' }).child({ bind: 0 });
    tapped.info('not recorded');
    tapped.warn({ reason: 'bind refused', password: 'hunter2', body: '{"x":1}' }, 'bind failed');
    tapped.error(new Error('socket closed'), 'connection lost');
    expect(sink.list()).toEqual([
      { atMs: 1_000, level: 'error', message: 'connection lost', context: { transport: 'carrier', bind: '0', error: 'socket closed' } },
      { atMs: 1_000, level: 'warn', message: 'bind failed', context: { transport: 'carrier', bind: '0', reason: 'bind refused' } },
    ]);
    expect(lines).toHaveLength(3);
  });

  it('keeps only the last N', () => {
    const sink = new RecentErrors(3);
    const tapped = tapLogger(pino({ level: 'silent' }), sink);
    for (let i = 0; i < 5; i++) tapped.warn(`event ${i}`);
    expect(sink.list().map((e) => e.message)).toEqual(['event 4', 'event 3', 'event 2']);
  });
});

describe('status page helpers', () => {
  it('escapes the five HTML specials', () => {
    expect(escapeHtml(`<script>alert("x")</script> & 'y'`)).toBe('&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; &#39;y&#39;');
  });

  it('refuses cross-site and cross-origin posts, takes same-origin ones and clients that send neither header', () => {
    expect(crossSiteReason({ 'sec-fetch-site': 'cross-site' }, '127.0.0.1:8081')).toBe('Sec-Fetch-Site is cross-site');
    expect(crossSiteReason({ 'sec-fetch-site': 'same-site' }, '127.0.0.1:8081')).toBe('Sec-Fetch-Site is same-site');
    expect(crossSiteReason({ origin: 'http://evil.example' }, '127.0.0.1:8081')).toBe('Origin http://evil.example is not this listener');
    expect(crossSiteReason({ origin: 'null' }, '127.0.0.1:8081')).toBe('Origin null is not this listener');
    expect(crossSiteReason({ 'sec-fetch-site': 'same-origin', origin: 'http://127.0.0.1:8081' }, '127.0.0.1:8081')).toBeNull();
    expect(crossSiteReason({}, '127.0.0.1:8081')).toBeNull();
  });

  it('compares secrets of any length', () => {
    expect(constantTimeEqual('Bearer abc', 'Bearer abc')).toBe(true);
    expect(constantTimeEqual('Bearer ab', 'Bearer abc')).toBe(false);
    expect(constantTimeEqual('', 'Bearer abc')).toBe(false);
  });
});

describe('metrics', () => {
  it('bounds receipt status labels', () => {
    expect(receiptStatusLabel('delivrd')).toBe('DELIVRD');
    expect(receiptStatusLabel('UNDELIV')).toBe('UNDELIV');
    expect(receiptStatusLabel('Some carrier text 42')).toBe('OTHER');
  });

  it('gives two gateways in one process their own registries', async () => {
    const store = await openStore({ path: ':memory:' });
    try {
      const { status } = sqliteStorePorts(store);
      const a = new GatewayMetrics({ status, activity: new TransportActivity(), transports: () => [] });
      const b = new GatewayMetrics({ status, activity: new TransportActivity(), transports: () => [] });
      a.partsSubmitted('carrier', 3);
      expect(await a.metrics()).toContain('smsgate_parts_submitted_total{transport="carrier"} 3');
      expect(await b.metrics()).not.toContain('smsgate_parts_submitted_total{transport="carrier"}');
    } finally {
      await store.close();
    }
  });
});

describe('transport activity', () => {
  it('averages submits over the last ten whole seconds and counts parts in flight', () => {
    let nowMs = 100_000;
    const activity = new TransportActivity(() => nowMs);
    activity.submitted('carrier', 50);
    nowMs += 1_000;
    activity.submitted('carrier', 30);
    activity.finished('carrier');
    expect(activity.partsInFlight('carrier')).toBe(79);
    expect(activity.ratePerSecond('carrier')).toBe(5);
    nowMs += 20_000;
    expect(activity.ratePerSecond('carrier')).toBe(0);
  });
});

describe('cross-site check behind a TLS proxy', () => {
  it('takes the https origin of the same host', () => {
    expect(crossSiteReason({ origin: 'https://admin.example:8443' }, 'admin.example:8443')).toBeNull();
    expect(crossSiteReason({ origin: 'https://other.example' }, 'admin.example:8443')).toBe('Origin https://other.example is not this listener');
  });
});

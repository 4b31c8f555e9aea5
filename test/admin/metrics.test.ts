/**
 * /metrics on the admin listener while a campaign runs over a real SMPP bind to the
 * receipting test SMSC: the spec'd series exist with their labels, move as the campaign goes, and
 * the whole exposition passes `promtool check metrics` (Debian prometheus).
 */
import { spawnSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { baseUrlOf, getSummary, until } from '../e2e/e2e-setup.js';
import { msisdns, scrape, sendCampaign, startAdminFixture, type AdminFixture } from './admin-fixture.js';

const RECIPIENTS = 300;
let fixture: AdminFixture;

beforeAll(async () => {
  // 100 parts/s: the 300 parts take about three seconds, long enough to scrape mid-campaign.
  fixture = await startAdminFixture('metrics', { maxPerSecond: 100 });
});

afterAll(async () => {
  await fixture?.stop();
});

function promtoolProblems(text: string): { status: number | null; output: string } {
  const result = spawnSync('/usr/bin/promtool', ['check', 'metrics'], { input: text, encoding: 'utf8' });
  return { status: result.status, output: `${result.stdout}${result.stderr}` };
}

describe('GET /metrics during a campaign over SMPP', () => {
  it('exposes the spec\'d series, and they move with the campaign', async () => {
    const before = await scrape(fixture.adminUrl);
    expect(before.series.get('smsgate_transport_up{transport="carrier",bind="0"}')).toBe(1);
    expect(before.series.get('smsgate_parts_submitted_total{transport="carrier"}')).toBe(0);
    expect(before.series.get('smsgate_queue_parts{transport="carrier"}')).toBe(0);
    expect(before.series.get('smsgate_webhook_dead_letters')).toBe(0);

    const recipients = msisdns(RECIPIENTS);
    const id = await sendCampaign(fixture, recipients);

    // Mid-campaign: some parts submitted, others still queued.
    const during = await until(
      () => scrape(fixture.adminUrl),
      (m) => (m.series.get('smsgate_parts_submitted_total{transport="carrier"}') ?? 0) > 0 && (m.series.get('smsgate_queue_parts{transport="carrier"}') ?? 0) > 0,
      20_000,
      'a scrape with parts submitted and parts queued',
    );
    const windowUsed = during.series.get('smsgate_transport_window_used{transport="carrier",bind="0"}');
    expect(windowUsed).toBeGreaterThanOrEqual(0);
    expect(windowUsed).toBeLessThanOrEqual(10);
    expect(during.series.get('smsgate_parts_submitted_total{transport="carrier"}')).toBeLessThan(RECIPIENTS);

    const summary = await until(() => getSummary(baseUrlOf(fixture.gateway), fixture.account.token, id), (s) => s?.pending === 0, 30_000, 'every recipient final');
    const undelivered = recipients.filter((m) => m.endsWith('9')).length;
    const dead = recipients.filter((m) => m.endsWith('8')).length;
    expect(summary).toEqual({ totalSent: RECIPIENTS, delivered: RECIPIENTS - undelivered, undelivered, pending: 0 });
    await fixture.receiver.waitUntil(() => fixture.receiver.requests.length >= RECIPIENTS, 30_000, 'a webhook attempt per recipient');

    const after = await until(
      () => scrape(fixture.adminUrl),
      // The counter moves when an attempt ends, the dead-letter gauge once its result is written.
      (m) =>
        (m.series.get('smsgate_webhook_deliveries_total{result="delivered"}') ?? 0) + (m.series.get('smsgate_webhook_deliveries_total{result="dead"}') ?? 0) >= RECIPIENTS &&
        m.series.get('smsgate_webhook_dead_letters') === recipients.filter((r) => r.endsWith('8')).length,
      10_000,
      'every webhook attempt counted and written',
    );
    const s = after.series;
    expect(s.get('smsgate_parts_submitted_total{transport="carrier"}')).toBe(RECIPIENTS);
    expect(s.get('smsgate_part_outcomes_total{transport="carrier",outcome="accepted",reason="OK"}')).toBe(RECIPIENTS);
    expect([...s.keys()].filter((k) => k.startsWith('smsgate_part_outcomes_total{') && !k.includes('outcome="accepted"'))).toEqual([]);
    expect(s.get('smsgate_receipts_total{transport="carrier",status="DELIVRD"}')).toBe(RECIPIENTS - undelivered);
    expect(s.get('smsgate_receipts_total{transport="carrier",status="UNDELIV"}')).toBe(undelivered);
    expect(s.get('smsgate_queue_parts{transport="carrier"}')).toBe(0);
    expect(s.get('smsgate_transport_window_used{transport="carrier",bind="0"}')).toBe(0);
    // 400 is not retried: each becomes a dead letter at once.
    expect(s.get('smsgate_webhook_deliveries_total{result="delivered"}')).toBe(RECIPIENTS - dead);
    expect(s.get('smsgate_webhook_deliveries_total{result="dead"}')).toBe(dead);
    expect(s.get('smsgate_webhook_dead_letters')).toBe(dead);
    expect(s.get('smsgate_webhook_lag_seconds_count')).toBe(RECIPIENTS - dead);
    expect(s.get('smsgate_webhook_lag_seconds_sum')).toBeGreaterThan(0);
    expect(s.get('smsgate_db_commit_seconds_count')).toBeGreaterThan(0);
    // The route label is the router's pattern: the campaign id never appears in a label.
    expect(s.get('smsgate_http_request_duration_seconds_count{route="/v1/campaign",method="POST",status="202"}')).toBe(1);
    expect(s.get('smsgate_http_request_duration_seconds_count{route="/v1/campaign/:id",method="GET",status="200"}')).toBeGreaterThanOrEqual(1);
    expect(after.text).not.toContain(id);
    // prom-client's default process and Node.js metrics, on this gateway's own registry.
    expect(s.has('process_cpu_user_seconds_total')).toBe(true);
    expect(s.has('nodejs_heap_size_used_bytes')).toBe(true);
    expect(after.text).toContain('# TYPE smsgate_webhook_lag_seconds histogram');
    expect(after.text).toContain('# TYPE smsgate_webhook_dead_letters gauge');
  });

  it('passes promtool check metrics', async () => {
    const { text } = await scrape(fixture.adminUrl);
    const result = promtoolProblems(text);
    expect(result.output).toBe('');
    expect(result.status).toBe(0);
  });

  it('is text/plain in the Prometheus exposition format', async () => {
    const response = await fetch(`${fixture.adminUrl}/metrics`);
    expect(response.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
    await response.text();
  });
});

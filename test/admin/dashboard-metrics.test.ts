/**
 * The metrics the dashboard and the alert rules are built on, moved by real parts: a gateway with
 * the receipting SMPP test SMSC (transport carrier) and a second SMPP transport whose password the
 * SMSC refuses (transport refused). A campaign's receipts fill the receipt latency histogram, the
 * refused bind counts a failure under its coded reason, a dropped session a reconnect, MO
 * deliver_sm from the SMSC the inbound counters; and every smsgate_* name the Grafana dashboard
 * and the Prometheus rules use is one this gateway's /metrics exposes.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { baseUrlOf, getSummary, until } from '../e2e/e2e-setup.js';
import { msisdns, scrape, sendCampaign, startAdminFixture, type AdminFixture } from './admin-fixture.js';
import { dashboardMetricNames, exposedMetricNames, promtool, rulesMetricNames } from './prometheus-files.js';

const RECIPIENTS = 20;
const RECEIPT_DELAY_MS = 300;
const ROOT = join(import.meta.dirname, '..', '..');
let fixture: AdminFixture;

beforeAll(async () => {
  fixture = await startAdminFixture('dashboard-metrics', {
    maxPerSecond: 1_000,
    // Receipts offered 300 ms after each submit, as a carrier's come later than its response.
    receiptDelayMs: RECEIPT_DELAY_MS,
    extraTransports: (smsc) => [{ name: 'refused', type: 'smpp', host: smsc.host, port: smsc.port, systemId: 'esme', password: 'wrong', bindMode: 'transceiver', window: 1, maxPerSecond: 10 }],
  });
});

afterAll(async () => {
  await fixture?.stop();
});

describe('the dashboard\'s metrics over real parts', () => {
  it('exposes build info, readiness, and the refused bind counted under SMPP_BIND_REFUSED', async () => {
    const version = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;
    const { series } = await until(
      () => scrape(fixture.adminUrl),
      (m) => (m.series.get('smsgate_bind_failures_total{transport="refused",reason="SMPP_BIND_REFUSED"}') ?? 0) >= 1,
      20_000,
      'the refused bind counted',
    );
    expect(series.get(`smsgate_build_info{version="${version}",node_version="${process.version}"}`)).toBe(1);
    expect(series.get('smsgate_ready')).toBe(1);
    expect(series.get('smsgate_bind_attempts_total{transport="refused"}')).toBeGreaterThanOrEqual(1);
    expect(series.get('smsgate_bind_attempts_total{transport="carrier"}')).toBe(1);
    expect([...series.keys()].filter((k) => k.startsWith('smsgate_bind_failures_total{transport="carrier"'))).toEqual([]);
    expect(series.get('smsgate_bind_reconnects_total{transport="carrier"}')).toBe(0);
    expect(series.get('smsgate_transport_up{transport="refused",bind="0"}')).toBe(0);
  });

  it('observes each part\'s submit-to-receipt latency and counts outcomes by reason', async () => {
    const before = await scrape(fixture.adminUrl);
    expect(before.series.get('smsgate_receipt_latency_seconds_count{transport="carrier"}') ?? 0).toBe(0);
    const recipients = msisdns(RECIPIENTS, '3538733');
    const id = await sendCampaign(fixture, recipients, 'Latency');
    await until(() => getSummary(baseUrlOf(fixture.gateway), fixture.account.token, id), (s) => s?.pending === 0, 30_000, 'every recipient final');
    const { series, text } = await scrape(fixture.adminUrl);
    // Every part's final receipt (DELIVRD, or UNDELIV for msisdns ending in 9) is one observation.
    expect(series.get('smsgate_receipt_latency_seconds_count{transport="carrier"}')).toBe(RECIPIENTS);
    expect(series.get('smsgate_receipt_latency_seconds_sum{transport="carrier"}')).toBeGreaterThan(0);
    // Receipts come RECEIPT_DELAY_MS after their submit: some (all, unless the machine stalls) are slower than 0.25 s.
    expect(series.get('smsgate_receipt_latency_seconds_bucket{le="0.25",transport="carrier"}')).toBeLessThan(RECIPIENTS);
    expect(series.get('smsgate_receipt_latency_seconds_bucket{le="3600",transport="carrier"}')).toBe(RECIPIENTS);
    expect(text).toContain('smsgate_receipt_latency_seconds_bucket{le="0.1",transport="carrier"}');
    expect(series.get('smsgate_part_outcomes_total{transport="carrier",outcome="accepted",reason="OK"}')).toBe(RECIPIENTS);
    expect(series.get('smsgate_queue_oldest_age_seconds{transport="carrier"}')).toBe(0);
  });

  it('counts a bound session lost as a reconnect', async () => {
    fixture.smsc.smsc.dropConnections();
    await until(
      () => scrape(fixture.adminUrl),
      (m) => m.series.get('smsgate_bind_reconnects_total{transport="carrier"}') === 1 && m.series.get('smsgate_transport_up{transport="carrier",bind="0"}') === 1,
      30_000,
      'the carrier bind lost once and bound again',
    );
  });

  it('counts inbound messages and parts from the SMSC', async () => {
    const mo = (fields: Record<string, unknown>): Promise<number> =>
      fixture.smsc.smsc.sendDeliverSm({ source_addr_ton: 1, source_addr_npi: 1, source_addr: '353871234567', destination_addr: '50123', esm_class: 0, data_coding: 0, ...fields });
    expect(await mo({ short_message: Buffer.from('Yes, 8pm works', 'latin1') })).toBe(0);
    // One message in two parts, joined by the SAR TLVs (SMPP 3.4 §5.3.2.22-24).
    for (const seq of [1, 2]) {
      expect(await mo({ short_message: Buffer.from(seq === 1 ? 'first half ' : 'second half', 'latin1'), sar_msg_ref_num: 77, sar_total_segments: 2, sar_segment_seqnum: seq })).toBe(0);
    }
    const { series } = await scrape(fixture.adminUrl);
    expect(series.get('smsgate_inbound_messages_total{transport="carrier"}')).toBe(2);
    expect(series.get('smsgate_inbound_parts_total{transport="carrier"}')).toBe(2);
    expect(series.get('smsgate_inbound_incomplete_total{transport="carrier"}')).toBe(0);
  });

  it('exposes every smsgate_* metric the Grafana dashboard and the Prometheus rules use, and passes promtool check metrics', async () => {
    const { text } = await scrape(fixture.adminUrl);
    const exposed = exposedMetricNames(text);
    const used = new Set([...dashboardMetricNames(join(ROOT, 'config', 'grafana', 'smsgate-dashboard.json')), ...rulesMetricNames(join(ROOT, 'config', 'prometheus', 'smsgate.rules.yml'))]);
    // The files do use the new metrics (a parser finding nothing would pass vacuously).
    expect(used.size).toBeGreaterThanOrEqual(10);
    expect([...used].filter((name) => !exposed.has(name))).toEqual([]);
    const check = promtool(['check', 'metrics'], text);
    expect(check.output).toBe('');
    expect(check.status).toBe(0);
  });
});

/**
 * The inbound counters over a real SQLite store: a concatenated message whose second part never
 * comes is delivered incomplete by the reassembly sweep, and counted as one message, one part and
 * one incomplete message; a repeated part is not counted again.
 */
import { describe, expect, it } from 'vitest';
import { GatewayMetrics } from '../../src/admin/gateway-metrics.js';
import { TransportActivity } from '../../src/admin/transport-activity.js';
import { InboundService } from '../../src/inbound/inbound-service.js';
import { silentLogger } from '../../src/common/log.js';
import { sqliteStorePorts } from '../../src/store/store-ports.js';
import { parseMetrics } from './admin-fixture.js';
import { useTempSqliteStore } from '../support/temp-sqlite-store.js';

const TIMEOUT_MS = 60_000;
const openTempStore = useTempSqliteStore('inbound-metrics');

describe('inbound metrics', () => {
  it('count a message delivered incomplete after the reassembly timeout, its part, and not a repeated part', async () => {
    const store = await openTempStore();
    const ports = sqliteStorePorts(store);
    let nowMs = Date.UTC(2026, 0, 15, 12, 0, 0);
    const metrics = new GatewayMetrics({ status: ports.status, transports: () => [], activity: new TransportActivity(() => nowMs), now: () => nowMs });
    metrics.zeroSeriesFor(['carrier']);
    const service = new InboundService({ store: ports.inbound, logger: silentLogger(), now: () => nowMs, wakeWebhooks: () => undefined, reassemblyTimeoutMs: TIMEOUT_MS, observer: metrics });
    const part = { from: '353871234567', to: '50123', text: 'first half ', receivedAt: new Date(nowMs).toISOString(), raw: 'pdu-1', concat: { scheme: 'sar' as const, reference: 9, total: 2, sequence: 1 } };
    expect((await service.receive('carrier', part)).kind).toBe('part-stored');
    expect((await service.receive('carrier', part)).kind).toBe('part-repeated');
    let series = parseMetrics(await metrics.metrics());
    expect(series.get('smsgate_inbound_parts_total{transport="carrier"}')).toBe(1);
    expect(series.get('smsgate_inbound_messages_total{transport="carrier"}')).toBe(0);

    nowMs += TIMEOUT_MS + 1;
    expect(await service.sweep()).toBe(1);
    series = parseMetrics(await metrics.metrics());
    expect(series.get('smsgate_inbound_messages_total{transport="carrier"}')).toBe(1);
    expect(series.get('smsgate_inbound_incomplete_total{transport="carrier"}')).toBe(1);
    expect(series.get('smsgate_inbound_parts_total{transport="carrier"}')).toBe(1);
  });
});

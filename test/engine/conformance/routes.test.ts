/**
 * Engine conformance: routes on both backends (docs/behaviour/routes.md). Parts queued on a
 * transport down longer than the route's failoverAfterMs move to the next one and are sent there,
 * their receipts matched on the transport they went out on; queued parts move back when the first
 * transport is up again; a weighted route splits its recipients by weight; a client-specific route
 * takes only its client's parts; outside a route's window parts wait queued (no attempt spent) and
 * go out once it opens; replaceRoutes reroutes parts not yet submitted.
 */
import { afterEach, expect, it } from 'vitest';
import { GatewayMetrics } from '../../../src/admin/gateway-metrics.js';
import { TransportActivity } from '../../../src/admin/transport-activity.js';
import { SimulatorTransport } from '../../../src/transports/simulator/index.js';
import { parseMetrics } from '../../admin/admin-fixture.js';
import { ManualClock } from '../../support/manual-clock.js';
import { allFinal, describeEngineConformance, msisdns, stepPolls, until } from './engine-backends.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

function simulator(name: string, overrides: Partial<ConstructorParameters<typeof SimulatorTransport>[0]> = {}): SimulatorTransport {
  return new SimulatorTransport({ name, type: 'simulator', maxPerSecond: 100_000, receiptDelayMs: 5, outcomes: [], ...overrides }, { recordAccepted: true });
}

const countBy = <T>(rows: readonly T[], key: (row: T) => string): Record<string, number> => {
  const counts: Record<string, number> = {};
  for (const row of rows) counts[key(row)] = (counts[key(row)] ?? 0) + 1;
  return counts;
};

describeEngineConformance('engine routes', (open) => {
  it('moves parts queued on a transport down longer than failoverAfterMs to the next one, receipts matched there', async () => {
    const rig = await open();
    const a = simulator('carrierA');
    const b = simulator('carrierB');
    const metrics = new GatewayMetrics({ status: rig.stores.status, transports: () => [a, b], activity: new TransportActivity(Date.now) });
    await rig.startEngine({ transports: [a, b], observer: metrics, routes: [{ prefix: '', name: 'everywhere', transports: ['carrierA', 'carrierB'], strategy: 'failover', failoverAfterMs: 2_000 }] });
    a.setDown('link lost');
    const campaignId = await rig.seedCampaign({ clientId: await rig.seedClient(), msisdns: msisdns(30) });
    // Queued on A while it has been down for less than failoverAfterMs; then moved.
    await until(() => rig.parts(campaignId), (ps) => ps.length === 30 && ps.every((p) => p.transport === 'carrierA' && p.state === 'queued'));
    const recipients = await until(() => rig.recipients(campaignId), allFinal);
    expect(recipients.map((r) => r.status)).toEqual(Array(30).fill('delivered'));
    const parts = await rig.parts(campaignId);
    expect(parts.map((p) => [p.transport, p.state, p.attempts])).toEqual(Array(30).fill(['carrierB', 'delivered', 1]));
    // None went out on A, each once on B, and every receipt is matched on B.
    expect(a.accepted).toHaveLength(0);
    expect(b.accepted).toHaveLength(30);
    const receipts = await rig.receipts();
    expect(receipts.map((r) => [r.transport, r.match_state])).toEqual(Array(30).fill(['carrierB', 'matched']));
    // Every move counted, labelled with the route's name.
    const text = await metrics.metrics();
    expect(parseMetrics(text).get('smsgate_route_failovers_total{route="everywhere",from="carrierA",to="carrierB"}')).toBe(30);
  });

  it('moves queued parts back to the first transport once it is up again, each part sent once', async () => {
    const rig = await open();
    const a = simulator('carrierA');
    // Slow, so most parts are still queued on it when A comes back.
    const b = simulator('carrierB', { maxPerSecond: 20, window: 1 });
    await rig.startEngine({ transports: [a, b], routes: [{ prefix: '', transports: ['carrierA', 'carrierB'], strategy: 'failover', failoverAfterMs: 200 }] });
    a.setDown('link lost');
    const campaignId = await rig.seedCampaign({ clientId: await rig.seedClient(), msisdns: msisdns(120) });
    await until(async () => b.accepted.length, (n) => n >= 5);
    a.setUp();
    const recipients = await until(() => rig.recipients(campaignId), allFinal);
    expect(recipients.every((r) => r.status === 'delivered')).toBe(true);
    const parts = await rig.parts(campaignId);
    const sentOn = countBy(parts, (p) => p.transport ?? 'none');
    expect(sentOn['carrierA']).toBeGreaterThan(0);
    expect(sentOn['carrierB']).toBeGreaterThanOrEqual(5);
    expect((sentOn['carrierA'] ?? 0) + (sentOn['carrierB'] ?? 0)).toBe(120);
    // Each part went out once, on the transport its row names.
    expect(a.accepted.length + b.accepted.length).toBe(120);
    expect(a.accepted).toHaveLength(sentOn['carrierA']!);
    expect((await rig.receipts()).every((r) => r.match_state === 'matched')).toBe(true);
  });

  it('retries a part that failed temporarily on the next transport, within one attempt budget; a permanent failure stays final', async () => {
    const rig = await open();
    const a = simulator('carrierA');
    const b = simulator('carrierB');
    a.forceOutcome('temporary');
    const routes = [{ prefix: '', transports: ['carrierA', 'carrierB'], strategy: 'failover' as const }];
    // The retry is due a second after the failure; the move follows the failure's commit at once.
    await rig.startEngine({ transports: [a, b], routes, engine: { retryBaseDelayMs: 1_000 } });
    const retried = await rig.seedCampaign({ clientId: await rig.seedClient(), msisdns: msisdns(3) });
    const recipients = await until(() => rig.recipients(retried), allFinal);
    expect(recipients.map((r) => r.status)).toEqual(Array(3).fill('delivered'));
    // One attempt failed on A, the second went out on B: two of the engine's attempts, not a budget per transport.
    expect((await rig.parts(retried)).map((p) => [p.transport, p.attempts])).toEqual(Array(3).fill(['carrierB', 2]));
    expect(b.accepted).toHaveLength(3);
    a.forceOutcome('reject');
    const rejected = await rig.seedCampaign({ clientId: await rig.seedClient(), msisdns: msisdns(2, '35386') });
    expect((await until(() => rig.recipients(rejected), allFinal)).map((r) => r.status)).toEqual(['undelivered', 'undelivered']);
    expect((await rig.parts(rejected)).map((p) => [p.transport, p.state, p.attempts])).toEqual(Array(2).fill(['carrierA', 'undelivered', 1]));
    expect(b.accepted).toHaveLength(3);
  });

  it('splits a weighted route 70/30 over the transports up', async () => {
    const rig = await open();
    const a = simulator('carrierA');
    const b = simulator('carrierB');
    await rig.startEngine({ transports: [a, b], routes: [{ prefix: '', transports: [{ name: 'carrierA', weight: 70 }, { name: 'carrierB', weight: 30 }], strategy: 'weighted' }] });
    const campaignId = await rig.seedCampaign({ clientId: await rig.seedClient(), msisdns: msisdns(1_000) });
    await until(() => rig.recipients(campaignId), allFinal, 60_000);
    const split = countBy(await rig.parts(campaignId), (p) => p.transport ?? 'none');
    expect(Math.abs(split['carrierA']! / 10 - 70)).toBeLessThanOrEqual(2);
    expect(Math.abs(split['carrierB']! / 10 - 30)).toBeLessThanOrEqual(2);
    expect(a.accepted.length + b.accepted.length).toBe(1_000);
  });

  it('sends a client-specific route\'s parts for that client only', async () => {
    const rig = await open();
    const general = simulator('general');
    const dedicated = simulator('dedicated');
    const acme = await rig.seedClient();
    const [{ name }] = await rig.sql<{ name: string }>('SELECT name FROM clients WHERE id = ?', [acme]) as [{ name: string }];
    const other = await rig.seedClient();
    await rig.startEngine({ transports: [general, dedicated], routes: [{ prefix: '353', transport: 'general' }, { prefix: '353', clients: [name], transport: 'dedicated' }] });
    const acmeCampaign = await rig.seedCampaign({ clientId: acme, msisdns: msisdns(3) });
    const otherCampaign = await rig.seedCampaign({ clientId: other, msisdns: msisdns(2) });
    await until(() => rig.recipients(acmeCampaign), allFinal);
    await until(() => rig.recipients(otherCampaign), allFinal);
    expect((await rig.parts(acmeCampaign)).map((p) => p.transport)).toEqual(['dedicated', 'dedicated', 'dedicated']);
    expect((await rig.parts(otherCampaign)).map((p) => p.transport)).toEqual(['general', 'general']);
  });

  it('keeps parts queued outside the route\'s window, no attempt spent, and sends them once it opens (manual clock)', async () => {
    const rig = await open();
    const sim = simulator('sim');
    const now = new Date();
    // A one-hour window in UTC starting two hours from now: closed now.
    const hhmm = (hoursAhead: number): string => `${String((now.getUTCHours() + hoursAhead) % 24).padStart(2, '0')}:00`;
    const clock = new ManualClock(Date.now());
    await rig.startEngine({ transports: [sim], clock, routes: [{ prefix: '', transport: 'sim', window: { from: hhmm(2), to: hhmm(3), timeZone: 'UTC' } }] });
    const campaignId = await rig.seedCampaign({ clientId: await rig.seedClient(), msisdns: msisdns(4) });
    const opensAt = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate(), now.getUTCHours() + 2);
    await stepPolls(clock, 3);
    const queued = await until(() => rig.parts(campaignId), (ps) => ps.length === 4);
    expect(queued.map((p) => [p.state, p.attempts, p.next_attempt_at])).toEqual(Array(4).fill(['queued', 0, opensAt]));
    // Fifty more scheduler and lane passes (and reroute passes): still waiting, nothing sent or spent.
    await stepPolls(clock, 50);
    expect((await rig.parts(campaignId)).map((p) => [p.state, p.attempts])).toEqual(Array(4).fill(['queued', 0]));
    expect((await rig.recipients(campaignId)).map((r) => r.status)).toEqual(Array(4).fill('pending'));
    expect(sim.accepted).toHaveLength(0);
    // The window opens.
    rig.clockSkewMs = opensAt - Date.now() + 1_000;
    const recipients = await until(async () => {
      await stepPolls(clock, 1);
      return rig.recipients(campaignId);
    }, allFinal);
    expect(recipients.map((r) => r.status)).toEqual(Array(4).fill('delivered'));
    expect(sim.accepted).toHaveLength(4);
  });

  it('reroutes parts not yet submitted when the routes are replaced', async () => {
    const rig = await open();
    const a = simulator('carrierA');
    const b = simulator('carrierB');
    // A is down, and the route would wait an hour before leaving it.
    const engine = await rig.startEngine({ transports: [a, b], routes: [{ prefix: '', transport: 'carrierA' }] });
    a.setDown('link lost');
    const campaignId = await rig.seedCampaign({ clientId: await rig.seedClient(), msisdns: msisdns(5) });
    await until(() => rig.parts(campaignId), (ps) => ps.length === 5 && ps.every((p) => p.transport === 'carrierA' && p.state === 'queued'));
    engine.replaceRoutes([{ prefix: '', transports: ['carrierA', 'carrierB'], strategy: 'failover', failoverAfterMs: 3_600_000 }]);
    // Still A: it has not been down an hour.
    expect(engine.routeStatus()).toEqual([{ route: '', prefix: '', clients: null, strategy: 'failover', transports: [{ name: 'carrierA', up: false }, { name: 'carrierB', up: true }], current: 'carrierA' }]);
    engine.replaceRoutes([{ prefix: '', transport: 'carrierB' }]);
    const recipients = await until(() => rig.recipients(campaignId), allFinal);
    expect(recipients.map((r) => r.status)).toEqual(Array(5).fill('delivered'));
    expect((await rig.parts(campaignId)).map((p) => p.transport)).toEqual(Array(5).fill('carrierB'));
    expect(a.accepted).toHaveLength(0);
  });
});

/**
 * Engine conformance: a client's send rate (client_send_rates) on both backends, over real SMPP on
 * loopback, measured at the SMSC's receive times. A rated client's parts reach the SMSC at most at
 * its rate (plus its one-second burst) while another client's campaign on the same transport goes
 * at the transport's full speed; the rate holds across the client's two transports together (the
 * limiter is the client's row, not a lane's); and a change of the row applies to the running engine
 * at its next claims, with no restart.
 */
import { afterEach, expect, it } from 'vitest';
import { SmppTransport } from '../../../src/transports/smpp/index.js';
import { ClusterSmsc } from '../../support/cluster-smsc.js';
import { mostWithin, rateBound } from '../../support/send-rate-measure.js';
import { allFinal, describeEngineConformance, msisdns, until, type EngineRig } from './engine-backends.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function carrier(): Promise<ClusterSmsc> {
  const smsc = await ClusterSmsc.start({ maxBinds: 8 });
  cleanups.push(() => smsc.stop());
  return smsc;
}

/** A fast transport: a wide window and no pacing of its own, so only the client's rate slows anything. */
function fastTransport(smsc: ClusterSmsc, name = 'carrier'): SmppTransport {
  return new SmppTransport({
    name, type: 'smpp', host: smsc.address.host, port: smsc.address.port, systemId: 'esme', password: 'secret', bindMode: 'transceiver',
    window: 50, maxPerSecond: 100_000, responseTimeoutMs: 5_000, reconnect: { initialDelayMs: 50, maxDelayMs: 200 },
  });
}

async function setRate(rig: EngineRig, clientId: number, partsPerSecond: number): Promise<void> {
  await rig.sql('INSERT INTO client_send_rates (client_id, parts_per_second, next_part_at_us, updated_at) VALUES (?, ?, 0, ?)', [clientId, partsPerSecond, Date.now()]);
}

/** When the SMSC received each submit to a destination starting with `prefix`, ascending. */
function receivedAt(smsc: ClusterSmsc, prefix: string): number[] {
  return smsc.submitLog.filter((s) => s.destination.startsWith(prefix)).map((s) => s.atMs);
}

function expectAtMostRate(times: readonly number[], partsPerSecond: number): void {
  for (const windowMs of [2_000, 4_000]) expect(mostWithin(times, windowMs), `parts within ${windowMs} ms`).toBeLessThanOrEqual(rateBound(partsPerSecond, windowMs));
}

describeEngineConformance('engine send rates', (open) => {
  it('sends a rated client\'s parts at most at its rate while another client\'s campaign on the transport goes at full speed', async () => {
    const rig = await open();
    const smsc = await carrier();
    await rig.startEngine({ transports: [fastTransport(smsc)] });
    const rated = await rig.seedClient();
    await setRate(rig, rated, 20);
    const startedMs = Date.now();
    const slow = await rig.seedCampaign({ clientId: rated, msisdns: msisdns(120, '35386') });
    const fast = await rig.seedCampaign({ clientId: await rig.seedClient(), msisdns: msisdns(200, '35387') });
    await until(() => rig.recipients(fast), allFinal, 30_000);
    await until(() => rig.recipients(slow), allFinal, 30_000);

    const slowTimes = receivedAt(smsc, '35386');
    const fastTimes = receivedAt(smsc, '35387');
    expect(slowTimes).toHaveLength(120);
    expect(fastTimes).toHaveLength(200);
    expectAtMostRate(slowTimes, 20);
    // 120 parts at 20 a second after a burst of 20 take 5 s at least.
    expect(slowTimes.at(-1)! - slowTimes[0]!).toBeGreaterThanOrEqual(4_500);
    // The other client is not held back: all of its 200 parts were in before the rated client's 80th
    // (3 s into its run at the earliest).
    expect(fastTimes.at(-1)!).toBeLessThan(slowTimes[79]!);
    // The limiter stands where the last claim left it: at or past the last part's time.
    const [row] = await rig.sql<{ next_part_at_us: number }>('SELECT next_part_at_us FROM client_send_rates WHERE client_id = ?', [rated]);
    expect(Number(row!.next_part_at_us)).toBeGreaterThan(startedMs * 1_000 + 4_000_000);
  }, 60_000);

  it('holds the rate across the client\'s two transports together', async () => {
    const rig = await open();
    // One SMSC each: a carrier offers a receipt on any of its binds, and a bind is one transport's.
    const [first, second] = [await carrier(), await carrier()];
    await rig.startEngine({
      transports: [fastTransport(first, 'carrier-1'), fastTransport(second, 'carrier-2')],
      routes: [{ prefix: '353861', transport: 'carrier-1' }, { prefix: '353862', transport: 'carrier-2' }],
    });
    const rated = await rig.seedClient();
    await setRate(rig, rated, 20);
    const campaign = await rig.seedCampaign({ clientId: rated, msisdns: [...msisdns(50, '353861'), ...msisdns(50, '353862')] });
    await until(() => rig.recipients(campaign), allFinal, 30_000);

    const times = [...receivedAt(first, '35386'), ...receivedAt(second, '35386')].sort((a, b) => a - b);
    expect(times).toHaveLength(100);
    expect(receivedAt(first, '353861')).toHaveLength(50);
    expect(receivedAt(second, '353862')).toHaveLength(50);
    // Two lanes, one limiter: together at most 20 a second, not 20 each.
    expectAtMostRate(times, 20);
    expect(times.at(-1)! - times[0]!).toBeGreaterThanOrEqual(3_500);
    expect(new Set((await rig.parts(campaign)).map((p) => p.transport))).toEqual(new Set(['carrier-1', 'carrier-2']));
  }, 60_000);

  it('applies a rate raised, then removed, on the running engine within 5 s', async () => {
    const rig = await open();
    const smsc = await carrier();
    await rig.startEngine({ transports: [fastTransport(smsc)] });
    const rated = await rig.seedClient();
    await setRate(rig, rated, 5);
    const campaign = await rig.seedCampaign({ clientId: rated, msisdns: msisdns(300, '35386') });
    await until(async () => receivedAt(smsc, '35386').length, (n) => n >= 10, 30_000);

    // At 5 a second the other 290 would take about a minute; at 20 a second, about 15 s.
    await rig.sql('UPDATE client_send_rates SET parts_per_second = ?, updated_at = ? WHERE client_id = ?', [20, Date.now(), rated]);
    const raisedMs = Date.now();
    await until(async () => receivedAt(smsc, '35386').length, (n) => n >= 60, 30_000);
    const raised = receivedAt(smsc, '35386').filter((t) => t >= raisedMs);
    // Faster than 5 a second could ever be (21 parts within 2 s; 5 a second allows 5 x 2.5 + 5), within 5 s of the change...
    const firstFastWindow = raised.findIndex((t, i) => (raised[i + 20] ?? Infinity) - t < 2_000);
    expect(firstFastWindow).toBeGreaterThanOrEqual(0);
    expect(raised[firstFastWindow]! - raisedMs).toBeLessThanOrEqual(5_000);
    // ...and never faster than the new rate.
    expectAtMostRate(raised, 20);

    // No row: unlimited again. The rest (about 240, 12 s at 20 a second) arrives at the transport's speed.
    await rig.sql('DELETE FROM client_send_rates WHERE client_id = ?', [rated]);
    const removedMs = Date.now();
    expect(receivedAt(smsc, '35386').length).toBeLessThanOrEqual(200);
    await until(() => rig.recipients(campaign), allFinal, 30_000);
    expect(receivedAt(smsc, '35386')).toHaveLength(300);
    expect(receivedAt(smsc, '35386').at(-1)! - removedMs).toBeLessThanOrEqual(5_000);
  }, 90_000);
});

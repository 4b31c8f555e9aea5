/**
 * PostgreSQL only (a backend with nodes): a client's send rate holds across the cluster. Two
 * engines with their own node ids and pools on one database, each bound to the same SMSC over real
 * SMPP, claim a rated client's campaign at once: the client's parts reach the SMSC at most at its
 * rate (plus its one-second burst) counted over both nodes together, because each claim locks the
 * client's limiter row before deciding, so the nodes spend its allowance one after the other.
 */
import { afterEach, expect, it } from 'vitest';
import { SmppTransport } from '../../../src/transports/smpp/index.js';
import { ClusterSmsc } from '../../support/cluster-smsc.js';
import { usePostgresSuite } from '../../support/postgres-suite.js';
import { mostWithin, rateBound } from '../../support/send-rate-measure.js';
import { allFinal, msisdns, postgresEngineRig, until } from '../conformance/engine-backends.js';

const suite = usePostgresSuite();
const stops: (() => Promise<void>)[] = [];

afterEach(async () => {
  for (const stop of stops.splice(0).reverse()) await stop();
});

function fastTransport(smsc: ClusterSmsc): SmppTransport {
  return new SmppTransport({
    name: 'carrier', type: 'smpp', host: smsc.address.host, port: smsc.address.port, systemId: 'esme', password: 'secret', bindMode: 'transceiver',
    window: 50, maxPerSecond: 100_000, responseTimeoutMs: 5_000, reconnect: { initialDelayMs: 50, maxDelayMs: 200 },
  });
}

it('keeps a client whose parts two nodes send at its rate in all', async () => {
  const RATE = 50;
  const [a, b] = await suite.openNodes(2);
  const smsc = await ClusterSmsc.start({ maxBinds: 4 });
  stops.push(() => smsc.stop());
  const nodeA = postgresEngineRig(a!.pool, suite.afterThisTest, { nodeId: () => 'node-a' });
  const nodeB = postgresEngineRig(b!.pool, suite.afterThisTest, { nodeId: () => 'node-b' });
  await nodeA.startEngine({ transports: [fastTransport(smsc)] });
  const engineB = await nodeB.startEngine({ transports: [fastTransport(smsc)] });
  await until(async () => smsc.boundRemotePorts().length, (n) => n === 2);

  const rated = await nodeA.seedClient();
  await nodeA.sql('INSERT INTO client_send_rates (client_id, parts_per_second, next_part_at_us, updated_at) VALUES (?, ?, 0, ?)', [rated, RATE, Date.now()]);
  const slow = await nodeA.seedCampaign({ clientId: rated, msisdns: msisdns(300, '35386') });
  engineB.wake();
  await until(() => nodeA.recipients(slow), allFinal, 60_000);

  const submits = smsc.submitLog.filter((s) => s.destination.startsWith('35386'));
  const times = submits.map((s) => s.atMs);
  expect(times).toHaveLength(300);
  // Both nodes sent the client's parts (each node's bind is its own TCP port)...
  expect(new Set(submits.map((s) => s.remotePort)).size).toBe(2);
  // ...and together at most its rate: 50 a second, plus its burst of 50.
  const figures = { within2s: mostWithin(times, 2_000), within4s: mostWithin(times, 4_000), spanMs: times.at(-1)! - times[0]! };
  console.log(`rated client over two nodes: ${JSON.stringify(figures)} (bounds ${rateBound(RATE, 2_000)}, ${rateBound(RATE, 4_000)})`);
  expect(figures.within2s).toBeLessThanOrEqual(rateBound(RATE, 2_000));
  expect(figures.within4s).toBeLessThanOrEqual(rateBound(RATE, 4_000));
  // 300 parts at 50 a second after a burst of 50: 5 s at least, however many nodes.
  expect(figures.spanMs).toBeGreaterThanOrEqual(4_500);
  expect(smsc.duplicates().extraSubmits).toBe(0);
}, 90_000);

/**
 * PostgreSQL only (a backend with nodes): several engines on one database, real SMPP over
 * loopback. Two nodes with their own node ids submit every part exactly once between them; a node
 * whose claims were reaped (requeueExpiredNodes, as NodeRegistry.reapExpired runs it) has its late
 * outcomes refused and counted, and its parts are sent by the other; connections killed mid-run
 * (pg_terminate_backend, as a failover does) lose nothing: the refused writes are retried until
 * they commit.
 */
import pg from 'pg';
import { afterEach, expect, it } from 'vitest';
import { requeueExpiredNodes } from '../../../src/store/postgres/node-takeover.js';
import { inTransaction } from '../../../src/store/postgres/pool.js';
import { SmppTransport } from '../../../src/transports/smpp/index.js';
import { ClusterSmsc } from '../../support/cluster-smsc.js';
import { usePostgresSuite } from '../../support/postgres-suite.js';
import { TestSmsc } from '../../support/smsc/test-smsc.js';
import { smppConfig } from '../../transports/smpp/helpers.js';
import { allFinal, msisdns, postgresEngineRig, until } from '../conformance/engine-backends.js';

const suite = usePostgresSuite();
const stops: (() => Promise<void>)[] = [];

afterEach(async () => {
  for (const stop of stops.splice(0).reverse()) await stop();
});

function clusterTransport(smsc: ClusterSmsc, name = 'carrier'): SmppTransport {
  return new SmppTransport({
    name, type: 'smpp', host: smsc.address.host, port: smsc.address.port, systemId: 'esme', password: 'secret', bindMode: 'transceiver',
    maxPerSecond: 100_000, responseTimeoutMs: 5_000, reconnect: { initialDelayMs: 50, maxDelayMs: 200 },
  });
}

it('two nodes on one database and one SMSC submit each of 300 parts exactly once and finish every recipient', async () => {
  const [a, b] = await suite.openNodes(2);
  const smsc = await ClusterSmsc.start({ maxBinds: 4 });
  stops.push(() => smsc.stop());
  const nodeA = postgresEngineRig(a!.pool, suite.afterThisTest, { nodeId: () => 'node-a' });
  const nodeB = postgresEngineRig(b!.pool, suite.afterThisTest, { nodeId: () => 'node-b' });
  const engineA = await nodeA.startEngine({ transports: [clusterTransport(smsc)] });
  const engineB = await nodeB.startEngine({ transports: [clusterTransport(smsc)] });
  const clientId = await nodeA.seedClient();
  const campaignId = await nodeA.seedCampaign({ clientId, msisdns: msisdns(200) });
  const longCampaign = await nodeA.seedCampaign({ clientId, text: 'B'.repeat(200), msisdns: msisdns(50, '35386') });
  engineB.wake();

  const recipients = [...await until(() => nodeA.recipients(campaignId), allFinal, 30_000), ...await until(() => nodeA.recipients(longCampaign), allFinal, 30_000)];
  expect(recipients.filter((r) => r.status === 'delivered')).toHaveLength(250);
  expect(smsc.submitCount).toBe(300);
  // One submit_sm per part: once per single-part recipient, twice (its two parts) per two-part one.
  expect(msisdns(200).map((m) => smsc.submitsByDestination.get(m))).toEqual(Array(200).fill(1));
  expect(msisdns(50, '35386').map((m) => smsc.submitsByDestination.get(m))).toEqual(Array(50).fill(2));
  const parts = [...await nodeA.parts(campaignId), ...await nodeA.parts(longCampaign)];
  expect(parts.every((p) => p.state === 'delivered' && p.attempts === 1 && p.claimed_by === null)).toBe(true);
  const [statsA, statsB] = [engineA.stats(), engineB.stats()];
  // Between them every recipient was materialised once and every part accepted once.
  expect(statsA.recipientsDispatched + statsB.recipientsDispatched).toBe(250);
  expect(statsA.outcomes.accepted + statsB.outcomes.accepted).toBe(300);
  expect(statsA.fencedWrites + statsB.fencedWrites).toBe(0);
  // One webhook row per recipient: its final DELIVRD.
  expect(new Set((await nodeA.outbox()).map((o) => o.recipient_id)).size).toBe(250);
});

it('refuses the late outcomes of a node whose claims were reaped, counts them, and the other node sends its parts', async () => {
  const [a, b] = await suite.openNodes(2);
  // Node A's SMSC never answers: A's parts stay 'submitting' under its claim, as on a stalled node.
  const silent = await TestSmsc.start({ onSubmit: () => ({ kind: 'never' }) });
  stops.push(() => silent.stop());
  const answering = await TestSmsc.start({ autoReceipt: { stat: 'DELIVRD' } });
  stops.push(() => answering.stop());
  const nodeA = postgresEngineRig(a!.pool, suite.afterThisTest, { nodeId: () => 'node-a' });
  const nodeB = postgresEngineRig(b!.pool, suite.afterThisTest, { nodeId: () => 'node-b' });
  // A polls rarely, so it does not claim the requeued parts back before B does.
  const engineA = await nodeA.startEngine({
    transports: [new SmppTransport(smppConfig(silent, { responseTimeoutMs: 1_500 }))], engine: { pollIntervalMs: 60_000 },
  });
  const campaignId = await nodeA.seedCampaign({ clientId: await nodeA.seedClient(), msisdns: msisdns(5) });
  await until(() => nodeA.parts(campaignId), (parts) => parts.length === 5 && parts.every((p) => p.state === 'submitting' && p.claimed_by === 'node-a'));
  await until(async () => silent.submits.length, (n) => n === 5);

  // The reaper declares node A expired and takes its parts back (no attempt spent).
  await inTransaction(b!.pool, (client) => requeueExpiredNodes(client, ['node-a']));
  const engineB = await nodeB.startEngine({ transports: [new SmppTransport(smppConfig(answering))] });
  engineB.wake();

  const recipients = await until(() => nodeA.recipients(campaignId), allFinal);
  expect(recipients.map((r) => r.status)).toEqual(Array(5).fill('delivered'));
  // A's submits time out (a lost response: a temporary outcome); each write is refused on the fence.
  await until(async () => engineA.stats().fencedWrites, (n) => n === 5);
  expect(engineA.stats().outcomes).toEqual({ accepted: 0, retried: 0, held: 0, failed: 0 });
  const parts = await nodeA.parts(campaignId);
  expect(parts.map((p) => [p.state, p.attempts, p.claimed_by])).toEqual(Array(5).fill(['delivered', 1, null]));
  // Every part went out once through B's SMSC, with B's message ids.
  expect(answering.submits).toHaveLength(5);
  expect(parts.map((p) => p.message_id).sort()).toEqual(answering.submits.map((s) => s.messageId).sort());
  expect(engineB.stats().outcomes.accepted).toBe(5);
});

it('loses nothing when the database kills its connections mid-run: outcome and receipt writes are retried until they commit', async () => {
  const RECIPIENTS = 1_000;
  const { pool } = await suite.open();
  const smsc = await TestSmsc.start({ autoReceipt: { stat: 'DELIVRD' }, responseDelayMs: 5 });
  stops.push(() => smsc.stop());
  const rig = postgresEngineRig(pool, suite.afterThisTest);
  const engine = await rig.startEngine({ transports: [new SmppTransport(smppConfig(smsc))] });
  const campaignId = await rig.seedCampaign({ clientId: await rig.seedClient(), msisdns: msisdns(RECIPIENTS) });

  const admin = new pg.Client({ connectionString: suite.server().urlFor('postgres') });
  await admin.connect();
  stops.push(() => admin.end());
  const { rows: [database] } = await pool.query<{ name: string }>('SELECT current_database() AS name');
  // Once every recipient is materialised, the writers are the outcome and receipt transactions (and
  // claims): kill every connection of the engine's database that is inside a writing transaction
  // (it has a transaction id), again and again, until a kill has hit an outcome or receipt commit.
  await until(() => rig.parts(campaignId), (parts) => parts.length === RECIPIENTS, 30_000);
  await until(async () => {
    await admin.query(
      `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid() AND backend_xid IS NOT NULL`,
      [database!.name]);
    return engine.stats().failedCommits;
  }, (failed) => failed >= 1, 30_000);

  const recipients = await until(() => rig.recipients(campaignId), allFinal, 60_000);
  expect(recipients.filter((r) => r.status === 'delivered')).toHaveLength(RECIPIENTS);
  const parts = await rig.parts(campaignId);
  expect(parts.every((p) => p.state === 'delivered')).toBe(true);
  expect(engine.stats().writesStalled).toBe(false);
  // Each part's outcome counted once: a retried unit never counts twice. (A kill between the
  // server's COMMIT and its answer makes the retry find the part already submitted: refused on the
  // fence, counted there instead.)
  expect(engine.stats().outcomes.accepted + engine.stats().fencedWrites).toBe(RECIPIENTS);
  expect((await rig.receipts()).filter((r) => r.match_state !== 'matched')).toEqual([]);
}, 120_000);

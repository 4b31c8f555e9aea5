/**
 * The cluster runtime of a node (src/cluster) on a real PostgreSQL, with real
 * SMPP binds to a carrier SMSC that enforces its bind limit: a node fenced out (its lease ran out)
 * rejoins under a new id and its old claims are refused; a live node's beat takes over an expired
 * node's parts and campaigns and wakes its loops; the bind slots are shared fairly by the beats
 * alone, and a node whose slot session the database ends unbinds at once and binds again after
 * reconnecting, the carrier never seeing a bind over its limit; a campaign accepted on one node
 * wakes the processors of the others through LISTEN/NOTIFY.
 */
import { Writable } from 'node:stream';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { readiness } from '../../src/admin/readiness.js';
import { CampaignProcessor } from '../../src/campaigns/campaign-processor.js';
import type { ClusterRuntime, ClusterWakeTargets } from '../../src/cluster/cluster-runtime.js';
import { joinPgCluster } from '../../src/cluster/postgres-cluster.js';
import { createLogger, silentLogger, type Logger } from '../../src/common/log.js';
import { openDatabase } from '../../src/store/sqlite/database.js';
import type { PgPool } from '../../src/store/postgres/pool.js';
import { createPgStores, type PgStores } from '../../src/store/postgres/stores.js';
import { SmppTransport } from '../../src/transports/smpp/index.js';
import { ClusterSmsc } from '../support/cluster-smsc.js';
import { usePostgresSuite } from '../support/postgres-suite.js';
import { dispatchAll, seedClient, seedReadyCampaign, T0_MS } from '../store/conformance/seed.js';

const suite = usePostgresSuite();

/** Beats ten times a second so a test sees several in well under a second. */
const HEARTBEAT_MS = 100;
const LEASE_MS = 1_000;

interface WakeCounts { parts: number; outbox: number; campaigns: number }

interface TestNode {
  runtime: ClusterRuntime;
  pool: PgPool;
  stores: PgStores;
  woken: WakeCounts;
  logs: Record<string, unknown>[];
}

function capturingLogger(): { logger: Logger; logs: Record<string, unknown>[] } {
  const logs: Record<string, unknown>[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString('utf8').split('\n')) if (line !== '') logs.push(JSON.parse(line) as Record<string, unknown>);
      done();
    },
  });
  return { logger: createLogger({ level: 'info', destination }), logs };
}

/** Joins a node on `pool` (not started: a node that joined and then died never beats). */
async function joinNode(pool: PgPool, url: string, options: { leaseMs?: number; wake?: Partial<ClusterWakeTargets> } = {}): Promise<TestNode> {
  const woken: WakeCounts = { parts: 0, outbox: 0, campaigns: 0 };
  const { logger, logs } = capturingLogger();
  const runtime = await joinPgCluster({
    url, apiPort: null, logger, heartbeatMs: HEARTBEAT_MS, leaseMs: options.leaseMs ?? LEASE_MS,
    wake: {
      parts: () => { woken.parts++; options.wake?.parts?.(); },
      outbox: () => { woken.outbox++; options.wake?.outbox?.(); },
      campaigns: () => { woken.campaigns++; options.wake?.campaigns?.(); },
    },
  });
  suite.afterThisTest(() => runtime.stop());
  return { runtime, pool, stores: createPgStores(pool), woken, logs };
}

async function until(condition: () => boolean | Promise<boolean>, what: string, deadlineMs = 15_000): Promise<void> {
  const deadline = Date.now() + deadlineMs;
  while (!(await condition())) {
    if (Date.now() >= deadline) throw new Error(`not before the deadline: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** A fresh migrated database and `count` pools on it, one per node; its URL for the sessions of their own. */
async function database(count: number): Promise<{ url: string; pools: PgPool[] }> {
  const url = await suite.server().createDatabase();
  const pools: PgPool[] = [];
  for (let i = 0; i < count; i++) {
    const opened = await openDatabase({ url, path: 'unused', synchronous: 'FULL', keyFile: 'unused' }, { migrate: i === 0 });
    if (opened.kind !== 'postgres') throw new Error('expected PostgreSQL');
    suite.afterThisTest(() => opened.close());
    pools.push(opened.pool);
  }
  return { url, pools };
}

async function nodeRows(pool: PgPool): Promise<string[]> {
  return (await pool.query<{ id: string }>('SELECT id FROM cluster_nodes ORDER BY id')).rows.map((r) => r.id);
}

describe('cluster membership (PostgreSQL)', () => {
  it('rejoins under a new id when fenced out, takes its old claims back and has the old id\'s writes refused', async () => {
    const { url, pools: [pool] } = await database(1);
    const node = await joinNode(pool!, url);
    await node.runtime.start();
    const formerId = node.runtime.node.nodeId() as string;
    const { clientId, userId } = await seedClient(node.stores);
    await node.stores.campaigns.insertCampaign({
      id: 'c-1', clientId, userId, state: 'queued', name: 'spring', sender: 'ACME', text: 'hello', sendAtLocal: null,
      createAsDraft: false, shouldSaveList: false, requestRecipientsJson: '[]', createdAtMs: T0_MS,
    });
    expect(await node.stores.campaigns.claimForProcessing('c-1', formerId)).toBeDefined();

    // The node stalls past its lease (what a SIGSTOP or a long GC pause does): its lease runs out.
    await node.pool.query('UPDATE cluster_nodes SET lease_until = 0 WHERE id = $1', [formerId]);
    await until(() => node.runtime.node.nodeId() !== formerId, 'the node rejoins under a new id');

    const newId = node.runtime.node.nodeId() as string;
    await until(async () => (await nodeRows(node.pool)).join() === newId, 'only the new row is left (the old one reaped)');
    // Logged once the beat that rejoined has finished (after its reap and its reads of the live nodes).
    await until(
      () => node.logs.some((l) => l['level'] === 40 && String(l['msg']).startsWith('fenced out of the cluster') && l['formerId'] === formerId && l['newId'] === newId),
      'the fenced log line',
    );
    expect(node.woken.parts).toBeGreaterThan(0);
    expect(node.woken.campaigns).toBeGreaterThan(0);
    // The old id's claim was handed back, and its late writes are refused.
    expect((await node.pool.query('SELECT processing_by FROM campaigns WHERE id = $1', ['c-1'])).rows[0]).toEqual({ processing_by: null });
    expect(await node.stores.campaigns.appendRecipients('c-1', [{ msisdn: '353871234567', clientReference: null }], T0_MS, formerId)).toBe(false);
    // Under the new id the node may claim it again.
    expect(await node.stores.campaigns.claimForProcessing('c-1', newId)).toBeDefined();
  });

  it("takes over an expired node's in-flight parts and campaigns on its next beat and wakes its loops", async () => {
    const { url, pools: [a, b] } = await database(2);
    // B joins, claims work, and dies (it never beats again): kill -9.
    const dead = await joinNode(b!, url, { leaseMs: 300 });
    const deadId = dead.runtime.node.nodeId() as string;
    const seeded = await seedReadyCampaign(dead.stores, { recipients: 5 });
    await dispatchAll(dead.stores, seeded, 'carrier');
    const claimed = await dead.stores.dispatch.claimParts('carrier', seeded.campaignId, T0_MS, 10, deadId);
    expect(claimed).toHaveLength(5);
    expect((await a!.query(`SELECT count(*)::int AS n FROM message_parts WHERE state = 'submitting' AND claimed_by = $1`, [deadId])).rows[0]).toEqual({ n: 5 });

    const live = await joinNode(a!, url);
    await live.runtime.start();
    await until(async () => !(await nodeRows(a!)).includes(deadId), "the dead node's row is reaped");
    expect((await a!.query(`SELECT state, claimed_by, count(*)::int AS n FROM message_parts GROUP BY state, claimed_by`)).rows)
      .toEqual([{ state: 'queued', claimed_by: null, n: 5 }]);
    expect(live.woken.parts).toBeGreaterThan(0);
    expect(live.woken.outbox).toBeGreaterThan(0);
    expect(live.logs.some((l) => String(l['msg']).startsWith('took over from nodes') && (l['nodeIds'] as string[]).includes(deadId))).toBe(true);
  });
});

describe('a database that goes away (a failover, a restart)', () => {
  it('logs the failing heartbeat once, keeps beating, and when the database is back rejoins (its lease ran out) and reopens its slot session', async () => {
    const { url, pools: [pool] } = await database(1);
    const node = await joinNode(pool!, url);
    await node.runtime.start();
    await until(() => node.runtime.stats().slotSessionOpen, 'the slot session is open');
    const formerId = node.runtime.node.nodeId();
    const name = new URL(url).pathname.slice(1);
    const admin = new pg.Client({ connectionString: suite.server().urlFor('postgres') });
    await admin.connect();
    suite.afterThisTest(() => admin.end());
    // Gone: no new connection is accepted, and every open one is cut.
    await admin.query(`ALTER DATABASE ${name} ALLOW_CONNECTIONS false`);
    await admin.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1', [name]);
    try {
      // 15 beats at 100 ms: longer than the 1 s lease.
      await until(() => node.runtime.stats().failedBeats >= 15, '15 failed beats');
      expect(node.runtime.stats().slotSessionOpen).toBe(false);
      // Past the lease unbeaten: /ready says this node may have been taken over.
      expect(node.runtime.membershipProblem()).toMatch(/^cluster heartbeat failing for \d+ ms \(lease 1000 ms\)/);
    } finally {
      await admin.query(`ALTER DATABASE ${name} ALLOW_CONNECTIONS true`);
    }
    const heartbeatErrors = node.logs.filter((l) => l['level'] === 50 && String(l['msg']).startsWith('the cluster heartbeat'));
    expect(heartbeatErrors).toHaveLength(1);

    await until(() => node.runtime.stats().rejoins === 1, 'the node rejoins once the database answers');
    expect(node.runtime.node.nodeId()).not.toBe(formerId);
    expect(node.logs.some((l) => String(l['msg']).startsWith('the cluster heartbeat (database unreachable?) works again'))).toBe(true);
    await until(() => node.runtime.stats().slotSessionOpen, 'the slot session is open again');
    expect(node.runtime.membershipProblem()).toBeNull();
    const beats = node.runtime.stats().beats;
    await until(() => node.runtime.stats().beats >= beats + 3, 'beats go on');
    expect(await nodeRows(pool!)).toEqual([node.runtime.node.nodeId()]);
  });
});

const CARRIER_BINDS = 3;

function smppNodeWithOneBind(url: string, pool: PgPool, smsc: ClusterSmsc): Promise<{ node: TestNode; transport: SmppTransport }> {
  return smppNode(url, pool, smsc, 1);
}

async function smppNode(url: string, pool: PgPool, smsc: ClusterSmsc, binds = CARRIER_BINDS): Promise<{ node: TestNode; transport: SmppTransport }> {
  const node = await joinNode(pool, url);
  const transport = new SmppTransport(
    {
      name: 'carrier', type: 'smpp', host: smsc.address.host, port: smsc.address.port, systemId: 'esme', password: 'secret',
      bindMode: 'transceiver', binds, maxPerSecond: 300, responseTimeoutMs: 2_000, reconnect: { initialDelayMs: 50, maxDelayMs: 200 },
    },
    { slotGate: node.runtime.slotGate, logger: silentLogger() },
  );
  // As the gateway does: the runtime first, the transport's own start (its first sync), then the slot loop.
  await node.runtime.start();
  await transport.start();
  node.runtime.beginSlotSync([transport]);
  suite.afterThisTest(async () => {
    await node.runtime.endSlotSync();
    await transport.stop(0);
    await node.runtime.stop();
  });
  return { node, transport };
}

describe('bind slots kept by the runtime (PostgreSQL, a carrier SMSC limiting binds to 3)', () => {
  it('shares the slots fairly as nodes come, unbinds at once when its slot session is lost, and binds again after reconnecting', async () => {
    const { url, pools: [da, db] } = await database(2);
    const smsc = await ClusterSmsc.start({ maxBinds: CARRIER_BINDS });
    suite.afterThisTest(() => smsc.stop());

    const a = await smppNode(url, da!, smsc);
    expect(a.transport.heldSlots()).toEqual([0, 1, 2]);
    await until(() => smsc.boundCount === 3, 'A binds all 3');

    // B joins: the beats alone rebalance to ceil(3/2) = 2 for A and 1 for B.
    const b = await smppNode(url, db!, smsc);
    await until(() => a.transport.heldSlots().length === 2 && b.transport.heldSlots().length === 1, 'A holds 2 slots and B 1');
    await until(() => smsc.boundCount === 3, '3 binds open');

    // The database ends A's slot session (a failover, a cut): A drops every bind at once.
    const held = a.transport.heldSlots();
    await da!.query(
      `SELECT pg_terminate_backend(pid) FROM pg_locks WHERE locktype = 'advisory' AND objid = $1::int AND pid <> pg_backend_pid()`, [held[0]]);
    await until(() => a.transport.heldSlots().length === 0 || !a.node.runtime.slots.connected, 'A lets go of its slots');
    expect(a.node.logs.some((l) => String(l['msg']).startsWith('bind slot session lost'))).toBe(true);
    // A reconnects (after its backoff) and the two share the 3 slots again.
    await until(() => a.node.runtime.slots.connected && a.transport.heldSlots().length + b.transport.heldSlots().length === 3,
      'all 3 slots held again after A reconnects');
    await until(() => smsc.boundCount === 3, '3 binds open again');
    expect(a.transport.heldSlots().length).toBeLessThanOrEqual(2);
    expect(b.transport.heldSlots().length).toBeLessThanOrEqual(2);
    // Never a bind over the carrier's limit, so never one refused.
    expect(smsc.maxConcurrentBinds).toBeLessThanOrEqual(CARRIER_BINDS);
    expect(smsc.bindsRefused).toBe(0);
  });
});

describe('/ready on a node of a cluster', () => {
  it('counts a transport whose one bind another node holds as up, and a node whose heartbeat fails past its lease as not ready', async () => {
    const { url, pools: [pa, pb] } = await database(2);
    const smsc = await ClusterSmsc.start({ maxBinds: 1 });
    suite.afterThisTest(() => smsc.stop());
    const holder = await smppNodeWithOneBind(url, pa!, smsc);
    await until(() => smsc.boundCount === 1, 'the holder binds');
    const other = await smppNodeWithOneBind(url, pb!, smsc);
    await until(() => other.node.runtime.stats().liveNodes === 2, 'the other node sees two live nodes');

    const status = createPgStores(pb!).status;
    expect(await readiness(status, [other.transport], () => false, other.node.runtime))
      .toEqual({ ready: true, database: 'writable', transportsUp: [], transportsHeldByPeers: ['carrier'], reasons: [] });
    expect(await readiness(createPgStores(pa!).status, [holder.transport], () => false, holder.node.runtime))
      .toEqual({ ready: true, database: 'writable', transportsUp: ['carrier'], transportsHeldByPeers: [], reasons: [] });
    expect(smsc.bindsRefused).toBe(0);
  });
});

describe('wake-ups between nodes (LISTEN/NOTIFY)', () => {
  it('wakes another node\'s campaign processor when a campaign is accepted, which processes it to ready under its node id', async () => {
    const { url, pools: [da, db] } = await database(2);
    const processors: CampaignProcessor[] = [];
    const node = async (pool: PgPool): Promise<TestNode> => {
      const stores = createPgStores(pool);
      let processor: CampaignProcessor | undefined;
      const joined = await joinNode(pool, url, { wake: { campaigns: () => processor?.wake() } });
      // Polling every minute: only a wake-up can make this test's deadline.
      processor = new CampaignProcessor({ store: stores, logger: silentLogger(), pollIntervalMs: 60_000, node: joined.runtime.node });
      processors.push(processor);
      suite.afterThisTest(() => processor.stop());
      await joined.runtime.start();
      processor.start();
      return joined;
    };
    const accepting = await node(da!);
    const other = await node(db!);
    const wokenBefore = other.woken.campaigns;

    const { clientId, userId } = await seedClient(accepting.stores);
    await accepting.stores.auth.insertSender({ clientId, name: 'ACME', type: 0 }, T0_MS);
    await accepting.stores.campaigns.insertCampaign({
      id: 'c-woken', clientId, userId, state: 'queued', name: 'spring', sender: 'ACME', text: 'hello', sendAtLocal: null,
      createAsDraft: false, shouldSaveList: false,
      requestRecipientsJson: JSON.stringify([{ msisdn: '0871234567' }, { msisdn: '0871234568' }]), createdAtMs: T0_MS,
    });
    await until(() => other.woken.campaigns > wokenBefore, 'the other node hears the accepted campaign');
    await until(async () => (await da!.query<{ state: string }>('SELECT state FROM campaigns WHERE id = $1', ['c-woken'])).rows[0]?.state === 'ready',
      'the campaign is ready long before any poll');
    expect((await da!.query('SELECT processing_by, total_sent FROM campaigns WHERE id = $1', ['c-woken'])).rows[0]).toEqual({ processing_by: null, total_sent: 2 });
    expect((await da!.query('SELECT count(*)::int AS n FROM recipients WHERE campaign_id = $1', ['c-woken'])).rows[0]).toEqual({ n: 2 });
    // markReady woke every node's engine too.
    await until(() => accepting.woken.parts > 0 && other.woken.parts > 0, 'both nodes hear the campaign become ready');
  });
});

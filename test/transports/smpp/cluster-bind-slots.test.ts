/**
 * `binds: N` is the carrier's limit for the whole cluster. Two
 * SMPP transports stand for two nodes; each holds its bind slots as advisory locks on one real
 * PostgreSQL (BindSlotLocks), and a carrier SMSC refuses any bind over its limit of 3 per system_id.
 * The slots follow the live nodes (at most ceil(N / live) each), the rate cap is split by slots
 * held, and a node whose lock session the database ends unbinds at once, its slots going to the
 * other node: the carrier never sees more than 3 binds and never refuses one.
 */
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { BindSlotLocks } from '../../../src/store/postgres/bind-slots.js';
import { SmppTransport } from '../../../src/transports/smpp/index.js';
import { ClusterSmsc } from '../../support/cluster-smsc.js';
import { usePostgresSuite } from '../../support/postgres-suite.js';

const CARRIER_BINDS = 3;
const CLUSTER_CAP_PER_SECOND = 300;

describe('SMPP bind slots shared by the nodes of a cluster', () => {
  const suite = usePostgresSuite();

  it('never opens more binds than the carrier allows, shares them fairly and hands a lost node\'s slots over', async () => {
    const url = await suite.server().createDatabase();
    const smsc = await ClusterSmsc.start({ maxBinds: CARRIER_BINDS });
    suite.afterThisTest(() => smsc.stop());
    let liveNodes = 1;
    const lost: string[] = [];
    const node = async (name: string) => {
      let transport: SmppTransport | undefined;
      const locks = await BindSlotLocks.connect(url, {
        liveNodes: () => Promise.resolve(liveNodes),
        onLost: () => {
          lost.push(name);
          void transport?.dropSlots();
        },
      });
      transport = new SmppTransport(
        {
          name: 'carrier', type: 'smpp', host: smsc.address.host, port: smsc.address.port, systemId: 'esme', password: 'secret',
          bindMode: 'transceiver', binds: CARRIER_BINDS, maxPerSecond: CLUSTER_CAP_PER_SECOND, responseTimeoutMs: 2_000,
          reconnect: { initialDelayMs: 50, maxDelayMs: 200 },
        },
        { slotGate: locks },
      );
      suite.afterThisTest(async () => {
        await transport?.stop(0);
        await locks.close();
      });
      return { transport, locks };
    };

    // Node A alone takes every slot and binds them all.
    const a = await node('a');
    await a.transport.start();
    expect(a.transport.heldSlots()).toEqual([0, 1, 2]);
    await expect.poll(() => smsc.boundCount).toBe(3);
    expect(a.transport.currentRatePerSecond()).toBe(CLUSTER_CAP_PER_SECOND);

    // Node B joins: nothing is free yet, so it binds nothing (and says why).
    liveNodes = 2;
    const b = await node('b');
    await b.transport.start();
    expect(b.transport.heldSlots()).toEqual([]);
    expect(b.transport.currentState()).toEqual({ state: 'down', reason: "no bind slot held: the cluster's binds are held by other nodes" });

    // A gives back what is over its share (ceil(3/2) = 2), B takes it: 2 + 1, never more than 3.
    expect(await a.transport.syncSlots()).toEqual([0, 1]);
    expect(await b.transport.syncSlots()).toEqual([2]);
    await expect.poll(() => smsc.boundCount).toBe(3);
    expect(a.transport.currentRatePerSecond()).toBe(200);
    expect(b.transport.currentRatePerSecond()).toBe(100);

    // The database ends A's lock session (a failover, a cut): A unbinds at once, B takes the slots.
    const admin = new pg.Client({ connectionString: url });
    await admin.connect();
    try {
      await admin.query(
        `SELECT pg_terminate_backend(pid) FROM pg_locks WHERE locktype = 'advisory' AND objid = 0 AND pid <> pg_backend_pid()`,
      );
    } finally {
      await admin.end();
    }
    await expect.poll(() => lost).toEqual(['a']);
    await expect.poll(() => a.transport.heldSlots()).toEqual([]);
    await expect.poll(() => smsc.boundCount).toBe(1);
    liveNodes = 1;
    expect(await b.transport.syncSlots()).toEqual([0, 1, 2]);
    await expect.poll(() => smsc.boundCount).toBe(3);
    expect(b.transport.currentRatePerSecond()).toBe(CLUSTER_CAP_PER_SECOND);

    expect(smsc.maxConcurrentBinds).toBe(CARRIER_BINDS);
    expect(smsc.bindsRefused).toBe(0);
  });
});

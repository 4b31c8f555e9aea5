/**
 * PostgreSQL restarted under a running campaign: two real `smsgate serve` nodes on one throwaway
 * PostgreSQL, a carrier allowing 2 binds (one a node) with a window of 10, so the cluster may have
 * binds x window = 20 submits on the wire. Mid-campaign the server is shut down (fast shutdown:
 * every session ended, as a restart or a failover does) and kept down longer than the nodes' lease
 * (5 s), so when it is back the nodes find their leases run out (one reaps the other), and every part a node
 * had sent without its outcome being recorded is requeued and sent again. That is what a node's
 * engine window bounds: `window` x the bind slots the node holds (one here), not x the cluster's
 * `binds` (which let each node leave 20 unrecorded, 40 for the cluster).
 * Asserted: nothing lost (every recipient final and webhooked), duplicate submits at most
 * binds x window, never more binds than the carrier allows, the rate within the cap plus one window.
 */
import { describe, it } from 'vitest';
import { runDatabaseOutage, useClusterPeers } from './cluster-setup.js';

const BOUNDS = { binds: 2, window: 10, maxPerSecond: 200 };
/** Longer than the 5 s lease: the leases run out while the database is down. */
const DOWN_MS = 8_000;

const peers = useClusterPeers('cluster-pg-restart', { maxBinds: BOUNDS.binds });

describe('PostgreSQL restarted mid-campaign under two nodes', () => {
  it('loses nothing and re-sends at most binds x window', () => runDatabaseOutage(peers, BOUNDS, `pg restart (down ${DOWN_MS} ms)`, (postgres) => postgres.restart(DOWN_MS)), 300_000);
});

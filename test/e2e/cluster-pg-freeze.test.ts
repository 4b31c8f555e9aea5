/**
 * PostgreSQL frozen under a running campaign: the same two nodes, carrier and bounds as the restart
 * test, but the server is stopped with SIGSTOP for 20 s (a stalled disk, a paused VM): no session
 * is ended, nothing answers. When it thaws every node's lease has run out on the database's clock,
 * so every node is fenced and rejoins, and what each had sent without its outcome recorded is
 * sent again: within binds x window for the cluster. Before outcomes were fenced on the id a part
 * was claimed under, a node's stale copy of a part claimed before the thaw requeued the claim it
 * made after rejoining, and that part went out twice more (56 to 81 extra submits against 20).
 * Asserted: nothing lost (every recipient final and webhooked), duplicate submits at most
 * binds x window, never more binds than the carrier allows, the rate within the cap plus one window.
 */
import { describe, it } from 'vitest';
import { runDatabaseOutage, useClusterPeers } from './cluster-setup.js';

const BOUNDS = { binds: 2, window: 10, maxPerSecond: 200 };
/** Far longer than the 5 s lease: the leases run out while the database is frozen. */
const FROZEN_MS = 20_000;

const peers = useClusterPeers('cluster-pg-freeze', { maxBinds: BOUNDS.binds });

describe('PostgreSQL frozen mid-campaign under two nodes', () => {
  it('loses nothing and re-sends at most binds x window', () => runDatabaseOutage(peers, BOUNDS, `pg freeze (${FROZEN_MS} ms)`, (postgres) => postgres.freeze(FROZEN_MS)), 300_000);
});

/**
 * GET /ready (issue 13): ready when the database takes a write now and at least one transport is
 * bound; otherwise 503 with every reason. Unlike /health on the API port (SPEC: 200 `Healthy`
 * whatever the binds do), this is what a load balancer or an orchestrator should gate on.
 * The write probe alone misses a full disk: its one rolled-back page fits in the page cache and the
 * WAL's existing room, while the engine's group commits fail with SQLITE_FULL; so the engine's own
 * "my writes are refused and being retried" state (issue 9 item 4) counts as not writable too.
 */
import type { Async } from '../store/ports.js';
import type { StatusQueries } from '../store/status-store.js';
import type { Transport } from '../transports/transport.js';

/**
 * What a node of a cluster adds to readiness (issue 11). Its SMPP transports bind only the slots
 * the cluster gives it: with fewer binds than nodes, a node may hold none because the others hold
 * every slot, and it is still ready (its API takes campaigns; the nodes holding the binds send
 * them). It is not ready while its heartbeat does not reach the database.
 */
export interface ClusterReadiness {
  /** Why this node is not a live member now (its heartbeat failing past the lease), or null. */
  membershipProblem(): string | null;
  /** True when the transport binds nothing here because the cluster's binds are all held by other nodes. */
  bindsHeldByPeers(transport: Transport): boolean;
  /** Cluster-wide settings this node runs with values other than the cluster's (src/cluster/config-agreement.ts). */
  configProblems?(): string[];
}

export interface Readiness {
  ready: boolean;
  database: 'writable' | 'not-writable';
  transportsUp: string[];
  /** A cluster node: transports whose binds are all held by other nodes (they count as up). */
  transportsHeldByPeers?: string[];
  /** Empty when ready. */
  reasons: string[];
}

export async function readiness(
  status: Pick<Async<StatusQueries>, 'probeWritable'>,
  transports: readonly Transport[],
  writesStalled: () => boolean = () => false,
  cluster?: ClusterReadiness,
): Promise<Readiness> {
  const reasons: string[] = [];
  const probe = await status.probeWritable();
  const stalled = writesStalled();
  if (!probe.ok) reasons.push(`database not writable: ${probe.reason}`);
  else if (stalled) reasons.push('database not writable: the store refuses the engine\'s writes (disk full or I/O error); they are being retried');
  const membership = cluster?.membershipProblem() ?? null;
  if (membership !== null) reasons.push(membership);
  reasons.push(...(cluster?.configProblems?.() ?? []));
  const up = transports.filter((t) => t.currentState().state === 'bound').map((t) => t.name);
  const heldByPeers = cluster === undefined ? [] : transports.filter((t) => t.currentState().state !== 'bound' && cluster.bindsHeldByPeers(t)).map((t) => t.name);
  if (up.length === 0 && heldByPeers.length === 0) {
    const states = transports.map((t) => {
      const state = t.currentState();
      return `${t.name} ${state.state}${state.state === 'down' ? ` (${state.reason})` : ''}`;
    });
    reasons.push(`no transport is up: ${states.join(', ')}`);
  }
  return {
    ready: reasons.length === 0,
    database: probe.ok && !stalled ? 'writable' : 'not-writable',
    transportsUp: up,
    ...(cluster === undefined ? {} : { transportsHeldByPeers: heldByPeers }),
    reasons,
  };
}

/**
 * GET /ready: ready when the database takes a write now and every route has a transport up to
 * carry it; otherwise 503 with every reason. Unlike /health on the API port (SPEC: 200 `Healthy`
 * whatever the binds do), this is what a load balancer or an orchestrator should gate on: a
 * gateway whose carrier for 353 is down is not ready even while the simulator for "" is up, since
 * the traffic a balancer keeps sending it for 353 cannot leave.
 *
 * The write probe alone misses a full disk: its one rolled-back page fits in the page cache and the
 * WAL's existing room, while the engine's group commits fail with SQLITE_FULL; so the engine's own
 * "my writes are refused and being retried" state counts as not writable too.
 *
 * Readiness is a list of checks (READINESS_CHECKS), each giving the reasons its condition is not
 * met; a new condition is one more function in the list.
 */
import type { Async } from '../store/ports.js';
import type { StatusQueries, WriteProbe } from '../store/sqlite/status-store.js';
import type { Transport, TransportState } from '../transports/transport.js';

/**
 * What a node of a cluster adds to readiness. Its SMPP transports bind only the slots the cluster
 * gives it: with fewer binds than nodes, a node may hold none because the others hold every slot,
 * and it is still ready (its API takes campaigns; the nodes holding the binds send them). It is
 * not ready while its heartbeat does not reach the database.
 */
export interface ClusterReadiness {
  /** Why this node is not a live member now (its heartbeat failing past the lease), or null. */
  membershipProblem(): string | null;
  /** True when the transport binds nothing here because the cluster's binds are all held by other nodes. */
  bindsHeldByPeers(transport: Transport): boolean;
  /** Cluster-wide settings this node runs with values other than the cluster's (src/cluster/config-agreement.ts). */
  configProblems?(): string[];
}

/** A route as readiness reads it: its prefix and the transport it names (config `routes[]`). */
export interface ReadinessRoute {
  prefix: string;
  transport?: string;
  transports?: readonly (string | { name: string })[];
}

/**
 * The transports that may carry a route's traffic: a route that lists several (failover,
 * weighted) is servable while any one of them is up, so readiness asks
 * this function and never reads `route.transport` itself.
 */
export function transportsOfRoute(route: ReadinessRoute): readonly string[] {
  if (route.transports !== undefined) return route.transports.map((t) => (typeof t === 'string' ? t : t.name));
  return route.transport === undefined ? [] : [route.transport];
}

/** One transport as readiness judges it: up (bound, or its binds held by cluster peers), or why not. */
export type TransportAvailability =
  | { name: string; state: TransportState['state']; up: true }
  | { name: string; state: TransportState['state'] | 'not-configured'; up: false; why: string; downReason?: string };

export interface RouteReadiness {
  prefix: string;
  servable: boolean;
  transports: TransportAvailability[];
}

export interface Readiness {
  ready: boolean;
  database: 'writable' | 'not-writable';
  transportsUp: string[];
  /** A cluster node: transports whose binds are all held by other nodes (they count as up). */
  transportsHeldByPeers?: string[];
  /** Each configured route and whether a transport is up to carry it (when routes are given). */
  routes?: RouteReadiness[];
  /** Empty when ready. */
  reasons: string[];
}

/** Why a transport in this state cannot carry traffic; null when it can (bound). */
export function whyNotUp(state: TransportState): string | null {
  switch (state.state) {
    case 'bound':
      return null;
    case 'binding':
      return 'not bound (binding)';
    case 'down':
      return `not bound (down: ${state.reason})`;
    default: {
      const unknown: never = state;
      return `not bound (${String((unknown as { state: unknown }).state)})`;
    }
  }
}

/** What the checks read, gathered once per request. */
export interface ReadinessFacts {
  probe: WriteProbe;
  writesStalled: boolean;
  cluster: ClusterReadiness | undefined;
  /** Every configured transport, in config order. */
  transports: TransportAvailability[];
  routes: readonly ReadinessRoute[] | undefined;
}

/** One condition of readiness: the reasons it is not met, none when it is. */
export type ReadinessCheck = (facts: ReadinessFacts) => string[];

function databaseWritable(facts: ReadinessFacts): string[] {
  if (!facts.probe.ok) return [`database not writable: ${facts.probe.reason}`];
  if (facts.writesStalled) return ['database not writable: the store refuses the engine\'s writes (disk full or I/O error); they are being retried'];
  return [];
}

function clusterMembership(facts: ReadinessFacts): string[] {
  const problem = facts.cluster?.membershipProblem() ?? null;
  return problem === null ? [] : [problem];
}

function someTransportUp(facts: ReadinessFacts): string[] {
  if (facts.transports.length === 0 || facts.transports.some((t) => t.up)) return [];
  // As this reason always read: `<name> <state>`, with a down transport's reason in brackets.
  const states = facts.transports.map((t) => (!t.up && t.downReason !== undefined ? `${t.name} down (${t.downReason})` : `${t.name} ${t.state}`));
  return [`no transport is up: ${states.join(', ')}`];
}

function routesServable(facts: ReadinessFacts): string[] {
  return routeReadiness(facts).filter((r) => !r.servable).map(routeReason);
}

/** Each route with the availability of its transports; a transport not configured is not up. */
export function routeReadiness(facts: Pick<ReadinessFacts, 'transports' | 'routes'>): RouteReadiness[] {
  return (facts.routes ?? []).map((route) => {
    const transports = transportsOfRoute(route).map(
      (name): TransportAvailability => facts.transports.find((t) => t.name === name) ?? { name, state: 'not-configured', up: false, why: 'not configured' },
    );
    return { prefix: route.prefix, servable: transports.some((t) => t.up), transports };
  });
}

export function routeReason(route: RouteReadiness): string {
  const prefix = route.prefix === '' ? 'route "" (every number)' : `route "${route.prefix}"`;
  const why = route.transports.map((t) => `transport ${t.name}: ${t.up ? 'up' : t.why}`).join('; ');
  return `${prefix} has no transport up to carry it: ${why}`;
}

/** Cluster-wide settings this node runs with values other than the cluster's: it binds none of them (config-agreement.ts). */
function clusterSettingsAgree(facts: ReadinessFacts): string[] {
  return facts.cluster?.configProblems?.() ?? [];
}

export const READINESS_CHECKS: readonly ReadinessCheck[] = [databaseWritable, clusterMembership, clusterSettingsAgree, someTransportUp, routesServable];

export function transportAvailability(transport: Transport, cluster: ClusterReadiness | undefined): TransportAvailability {
  const state = transport.currentState();
  const why = whyNotUp(state);
  if (why === null || cluster?.bindsHeldByPeers(transport) === true) return { name: transport.name, state: state.state, up: true };
  return { name: transport.name, state: state.state, up: false, why, ...(state.state === 'down' ? { downReason: state.reason } : {}) };
}

export async function readiness(
  status: Pick<Async<StatusQueries>, 'probeWritable'>,
  transports: readonly Transport[],
  writesStalled: () => boolean = () => false,
  cluster?: ClusterReadiness,
  routes?: readonly ReadinessRoute[],
): Promise<Readiness> {
  const facts: ReadinessFacts = {
    probe: await status.probeWritable(),
    writesStalled: writesStalled(),
    cluster,
    transports: transports.map((t) => transportAvailability(t, cluster)),
    routes,
  };
  const reasons = READINESS_CHECKS.flatMap((check) => check(facts));
  const bound = transports.filter((t) => t.currentState().state === 'bound').map((t) => t.name);
  return {
    ready: reasons.length === 0,
    database: facts.probe.ok && !facts.writesStalled ? 'writable' : 'not-writable',
    transportsUp: bound,
    ...(cluster === undefined ? {} : { transportsHeldByPeers: transports.filter((t) => !bound.includes(t.name) && cluster.bindsHeldByPeers(t)).map((t) => t.name) }),
    ...(routes === undefined ? {} : { routes: routeReadiness(facts) }),
    reasons,
  };
}

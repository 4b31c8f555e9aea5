/**
 * Routes (config `routes[]`, docs/behaviour/routes.md): which transport a part goes to. The route
 * is the one with the longest prefix of the normalised msisdn among the routes for the sender's
 * client (a route without `clients` is for everyone; a client-specific route beats a general one
 * of the same prefix; among equals the first listed wins). A route names one transport, or several
 * with a strategy: failover (the first usable one) or weighted (split by weight over the usable
 * ones). A transport is usable for a route while it is bound, or down for less than the route's
 * failoverAfterMs (a blip does not move traffic). Outside the route's window its parts wait.
 *
 * planRoute is the one decision, pure (time and transport states are parameters): materialise
 * calls it for new parts, the reroute step for parts already queued.
 */
import type { RouteConfig } from '../config/types.js';
import { sendWindowOf, windowState, type SendWindow } from './send-window.js';

/** How long a listed transport may be down before its parts move on, when the route does not say. */
export const DEFAULT_FAILOVER_AFTER_MS = 10_000;

export type RouteStrategy = 'single' | 'failover' | 'weighted';

export interface RouteTransport {
  name: string;
  /** Weighted routes only; 1 elsewhere. */
  weight: number;
}

export interface Route {
  /** The metrics and status label: the route's `name`, else its prefix. */
  label: string;
  prefix: string;
  /** Client names the route is for; null: every client. */
  clients: ReadonlySet<string> | null;
  strategy: RouteStrategy;
  transports: readonly RouteTransport[];
  window: SendWindow | null;
  failoverAfterMs: number;
}

/** A transport as the planner sees it: bound, or not since `sinceMs`. Absent from the map: not run by this engine. */
export type TransportCondition = { up: true } | { up: false; sinceMs: number };
export type TransportConditions = ReadonlyMap<string, TransportCondition>;

/** What a part to this number, of this client, needs for a route choice. */
export interface RoutedPart {
  msisdn: string;
  /** The sending client's name. */
  client: string;
  /** Spreads a weighted route's parts: the recipient id (a message's parts stay on one transport). */
  spreadKey: number;
}

export type RouteChoice =
  | { kind: 'send'; route: Route; transport: string }
  /** The route's window is closed: the part waits, queued on `transport`, until `untilMs`. */
  | { kind: 'wait'; route: Route; transport: string; untilMs: number }
  /** No route matches, or none of its transports runs here; `routed`: the first one it names, if any matched. */
  | { kind: 'no-route'; routed: string | undefined };

export function routeOf(config: RouteConfig): Route {
  const common = {
    label: config.name ?? config.prefix,
    prefix: config.prefix,
    clients: config.clients === undefined ? null : new Set(config.clients),
    window: config.window === undefined ? null : sendWindowOf(config.window),
    failoverAfterMs: config.failoverAfterMs ?? DEFAULT_FAILOVER_AFTER_MS,
  };
  if (config.transports === undefined) return { ...common, strategy: 'single', transports: [{ name: config.transport, weight: 1 }] };
  const transports = config.transports.map((t) => (typeof t === 'string' ? { name: t, weight: 1 } : { name: t.name, weight: t.weight ?? 1 }));
  return { ...common, strategy: config.strategy, transports };
}

export class RouteTable {
  /** In the config's order (the status page lists them so). */
  readonly routes: readonly Route[];
  private readonly byPrecedence: readonly Route[];

  constructor(entries: readonly RouteConfig[]) {
    this.routes = entries.map(routeOf);
    // Longest prefix first, then client-specific before general; the stable sort keeps the listed order among equals.
    this.byPrecedence = [...this.routes].sort((a, b) => b.prefix.length - a.prefix.length || Number(b.clients !== null) - Number(a.clients !== null));
  }

  /** The route for this number and client, or undefined when none matches. */
  match(msisdn: string, client: string): Route | undefined {
    return this.byPrecedence.find((route) => msisdn.startsWith(route.prefix) && (route.clients === null || route.clients.has(client)));
  }

  /** The transports any route names, once each. */
  transportNames(): Set<string> {
    return new Set(this.routes.flatMap((r) => r.transports.map((t) => t.name)));
  }
}

/**
 * The transport for a part now, or that it waits for the window, or that it has no route.
 * `avoid`: a transport the part just failed on temporarily; another usable one is preferred.
 */
export function planRoute(table: RouteTable, part: RoutedPart, conditions: TransportConditions, nowMs: number, avoid?: string): RouteChoice {
  const route = table.match(part.msisdn, part.client);
  if (route === undefined) return { kind: 'no-route', routed: undefined };
  const transport = pickTransport(route, conditions, nowMs, part.spreadKey, avoid);
  if (transport === undefined) return { kind: 'no-route', routed: route.transports[0]?.name };
  const window = route.window === null ? { open: true as const } : windowState(route.window, nowMs);
  return window.open ? { kind: 'send', route, transport } : { kind: 'wait', route, transport, untilMs: window.opensAtMs };
}

/** Whether a transport can take a route's parts now: bound, or down for less than the route's failoverAfterMs. */
export function isUsable(condition: TransportCondition | undefined, route: Pick<Route, 'failoverAfterMs'>, nowMs: number): boolean {
  if (condition === undefined) return false;
  return condition.up || nowMs - condition.sinceMs < route.failoverAfterMs;
}

/**
 * The route's transports this engine runs, narrowed to the usable ones (those neither avoided nor
 * usable when none is: the parts then wait for them on the preferred one).
 */
export function candidatesOf(route: Route, conditions: TransportConditions, nowMs: number, avoid?: string): RouteTransport[] {
  const running = route.transports.filter((t) => conditions.has(t.name));
  const usable = running.filter((t) => isUsable(conditions.get(t.name), route, nowMs));
  const notAvoided = usable.filter((t) => t.name !== avoid);
  if (notAvoided.length > 0) return notAvoided;
  return usable.length > 0 ? usable : running;
}

function pickTransport(route: Route, conditions: TransportConditions, nowMs: number, spreadKey: number, avoid: string | undefined): string | undefined {
  const candidates = candidatesOf(route, conditions, nowMs, avoid);
  if (route.strategy !== 'weighted') return candidates[0]?.name;
  return spreadByWeight(candidates, spreadKey)?.name;
}

/** 1/φ: consecutive keys times it, modulo 1, spread over [0, 1) as evenly as any sequence can (Weyl). */
const GOLDEN_FRACTION = 0.6180339887498949;

/**
 * The transport a key falls on, splitting keys by weight: the key's point in [0, 1) (a low-discrepancy
 * sequence over consecutive keys, so 10,000 recipients land within a fraction of a point of the
 * weights) against the cumulative weights. The same key and transports give the same answer, so a
 * part stays where it is until the usable transports change.
 */
export function spreadByWeight<T extends { weight: number }>(transports: readonly T[], key: number): T | undefined {
  const total = transports.reduce((sum, t) => sum + t.weight, 0);
  if (total <= 0) return transports[0];
  const point = ((key * GOLDEN_FRACTION) % 1) * total;
  let cumulative = 0;
  for (const transport of transports) {
    cumulative += transport.weight;
    if (point < cumulative) return transport;
  }
  return transports[transports.length - 1];
}

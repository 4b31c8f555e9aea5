/**
 * Where each route's parts go now, for the status page and /status.json: its transports (up:
 * bound now), and the one its parts go to (failover: the first usable; weighted: null while the
 * split spans several, else the one left). Pure: the same decision planRoute makes (candidatesOf).
 */
import { candidatesOf, type RouteStrategy, type RouteTable, type TransportConditions } from './routing.js';
import { windowState } from './send-window.js';

export interface RouteStatus {
  /** The route's label: its `name`, else its prefix. */
  route: string;
  prefix: string;
  clients: string[] | null;
  strategy: RouteStrategy;
  transports: { name: string; up: boolean; weight?: number }[];
  /** The transport new parts go to now; null when none of its transports runs here, or a weighted split spans several. */
  current: string | null;
  window?: { open: boolean };
}

export function routeStatus(table: RouteTable, conditions: TransportConditions, nowMs: number): RouteStatus[] {
  return table.routes.map((route) => {
    const running = route.transports.some((t) => conditions.has(t.name));
    const candidates = running ? candidatesOf(route, conditions, nowMs) : [];
    const current = route.strategy === 'weighted' && candidates.length > 1 ? null : (candidates[0]?.name ?? null);
    return {
      route: route.label,
      prefix: route.prefix,
      clients: route.clients === null ? null : [...route.clients],
      strategy: route.strategy,
      transports: route.transports.map((t) => ({ name: t.name, up: conditions.get(t.name)?.up === true, ...(route.strategy === 'weighted' ? { weight: t.weight } : {}) })),
      current,
      ...(route.window === null ? {} : { window: { open: windowState(route.window, nowMs).open } }),
    };
  });
}

/**
 * Where each route's parts go now, for the status page, while a route names one transport: its
 * transport when that is up, else none (its parts wait queued). The engine's own route status,
 * once routes list several transports, takes this one's place.
 */
import type { RouteStatus } from '../admin/status-facts.js';
import type { RouteConfig } from '../config/types.js';
import type { Transport } from '../transports/transport.js';

export function singleTransportRouteStatus(routes: readonly RouteConfig[], transports: readonly Transport[]): RouteStatus[] {
  const running = new Map(transports.map((t) => [t.name, t]));
  return routes.map((route) => {
    const up = running.get(route.transport)?.currentState().state === 'bound';
    return { route: route.prefix, strategy: 'single', transports: [{ name: route.transport, up }], current: up ? route.transport : null };
  });
}

/**
 * The rules of `routes[]` a schema cannot say: `transport` xor `transports` (with a `strategy`),
 * every named transport configured and listed once per route, a window's time zone known to the
 * IANA database and of some length, and no two routes for the same prefix and clients. Client
 * names are not checked here: the loader cannot see the database (`smsgate config check` warns
 * about unknown ones when it can open the store).
 */
import { IANAZone } from 'luxon';
import type { JsonPath } from './json-path.js';
import type { RouteConfig } from './types.js';

export interface RouteProblem {
  path: JsonPath;
  what: string;
}

export function routeProblem(routes: readonly RouteConfig[], transportNames: readonly string[]): RouteProblem | null {
  const names = new Set(transportNames);
  const seen = new Set<string>();
  const unknown = (name: string): string => `no transport named "${name}" (configured: ${[...names].join(', ')})`;
  for (const [index, route] of routes.entries()) {
    const at = (...rest: JsonPath): JsonPath => ['routes', index, ...rest];
    const problem = shapeProblem(route, at, names, unknown) ?? windowProblem(route, at);
    if (problem !== null) return problem;
    // A client-specific route and a general one may share a prefix; two for the same clients may not.
    const key = `${route.prefix}\u0000${[...(route.clients ?? [])].sort().join('\u0000')}`;
    if (seen.has(key)) return { path: at('prefix'), what: `duplicate route prefix "${route.prefix}"${route.clients === undefined ? '' : ' for the same clients'}` };
    seen.add(key);
  }
  return null;
}

function shapeProblem(route: RouteConfig, at: (...rest: JsonPath) => JsonPath, names: ReadonlySet<string>, unknown: (name: string) => string): RouteProblem | null {
  if (route.transports === undefined) {
    if (route.transport === undefined) return { path: at('transport'), what: 'is required (or "transports" with a "strategy")' };
    if (route.strategy !== undefined) return { path: at('strategy'), what: 'applies to "transports" only (this route names one "transport")' };
    return names.has(route.transport) ? null : { path: at('transport'), what: unknown(route.transport) };
  }
  if (route.transport !== undefined) return { path: at('transport'), what: 'give either "transport" or "transports", not both' };
  if (route.strategy === undefined) return { path: at('strategy'), what: 'is required with "transports": "failover" or "weighted"' };
  const listed = new Set<string>();
  for (const [i, entry] of route.transports.entries()) {
    const name = typeof entry === 'string' ? entry : entry.name;
    const path = typeof entry === 'string' ? at('transports', i) : at('transports', i, 'name');
    if (!names.has(name)) return { path, what: unknown(name) };
    if (listed.has(name)) return { path, what: `transport "${name}" is listed twice` };
    listed.add(name);
  }
  return null;
}

function windowProblem(route: RouteConfig, at: (...rest: JsonPath) => JsonPath): RouteProblem | null {
  const { window } = route;
  if (window === undefined) return null;
  if (!IANAZone.isValidZone(window.timeZone)) return { path: at('window', 'timeZone'), what: `unknown time zone "${window.timeZone}" (an IANA name such as "Europe/Dublin")` };
  if (window.from === window.to) return { path: at('window', 'to'), what: `must differ from "from" (${window.from}): the window would have no length` };
  return null;
}

/**
 * `config check`'s warning about route client names no client has (config `routes[].clients`): the
 * loader cannot see the database, so the check reads the client names where it can without side
 * effects, from an existing SQLite file opened read-only. On PostgreSQL, or before the file exists
 * or is migrated, names are not checked (docs/reference/configuration.md says so).
 */
import type { DatabaseConfig, RouteConfig } from '../config/types.js';
import { readClientNames } from '../store/sqlite/client-names.js';

/** `routes[i].clients[j]: no client named "x" ...` for each name `known` lacks. */
export function unknownRouteClients(routes: readonly RouteConfig[], known: ReadonlySet<string>): string[] {
  return routes.flatMap((route, i) => (route.clients ?? []).flatMap((name, j) => (known.has(name) ? [] : [`routes[${i}].clients[${j}]: no client named "${name}" in the database (the route applies to nobody until one is created)`])));
}

/** The client names of the SQLite database, or null when they cannot be read without changing anything. */
export function clientNamesOf(database: DatabaseConfig): Set<string> | null {
  return database.url !== undefined ? null : readClientNames(database.path);
}

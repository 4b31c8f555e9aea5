/**
 * The backend factory: which database backend a config selects (`database.url` PostgreSQL, else
 * the SQLite file at `database.path`). The gateway (./create-gateway.ts) and the admin commands
 * (src/cli/admin-session.ts) both open their database through it, so the choice is made here once.
 */
import { databaseTarget } from '../config/database.js';
import type { DatabaseConfig } from '../config/types.js';
import type { Backend } from './backend.js';
import { POSTGRES_BACKEND } from './postgres/backend.js';
import { SQLITE_BACKEND } from './sqlite/backend.js';

export function backendFor(database: DatabaseConfig): Backend {
  return databaseTarget(database).kind === 'postgres' ? POSTGRES_BACKEND : SQLITE_BACKEND;
}

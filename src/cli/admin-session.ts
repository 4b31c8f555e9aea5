/**
 * What the admin commands (migrate, client, user, token, sender) share: the config, the store with
 * migrations applied and its ports (src/store/store-ports.ts: every command reads and writes through
 * them, never a connection), the AuthService, output as text or `--json`, and failures as exit codes:
 * a coded GatewayError (missing client or user, duplicate, bad config) prints its message and
 * exits 1; usage errors are the caller's (exit 2 via withUsage).
 */
import { AuthService } from '../auth/index.js';
import { describeDatabase } from '../config/database.js';
import { maskKnownSecrets } from '../common/secret-text.js';
import { loadConfig, type SmsGateConfig } from '../gateway-config.js';
import { isGatewayError } from '../common/errors.js';
import { silentLogger } from '../common/log.js';
import { exitCodeFor } from './coded-exit.js';
import { openDatabase, type Database, type Store } from '../store/sqlite/database.js';
import { createPgStores } from '../store/postgres/stores.js';
import { sealedSecretOf, secretBoxForDatabase } from '../store/secret-box.js';
import { sqliteBackup, sqliteStorePorts, type DatabaseBackup, type StorePorts } from '../store/store-ports.js';

/** An open database as the commands use it. */
export interface StoreSession {
  config: SmsGateConfig;
  ports: StorePorts;
  /** `smsgate db backup`'s copier; undefined on a backend without one. */
  backup: DatabaseBackup | undefined;
  /**
   * The SQLite store itself, only for the engine-side parts that still take it whole
   * (WebhookSender); undefined on PostgreSQL.
   */
  store: Store | undefined;
}

export interface AdminSession {
  config: SmsGateConfig;
  ports: StorePorts;
  auth: AuthService;
}

export interface AdminOutput {
  json: boolean;
  /** Prints `value` as one JSON document with --json, else the human text. */
  result(text: string, value: unknown): void;
}

export function adminOutput(json: boolean): AdminOutput {
  return {
    json,
    result(text, value) {
      process.stdout.write(json ? `${JSON.stringify(value, null, 2)}\n` : `${text}\n`);
    },
  };
}

export interface DatabaseSessionOptions {
  /** Apply pending migrations first. */
  migrate: boolean;
  /** SQLite: create the database file when there is none (default false: exit 1 naming the file). */
  createIfMissing?: boolean;
}

/**
 * Runs `body` with the database the config selects (SQLite `database.path` or PostgreSQL
 * `database.url`); coded failures become a message on stderr and exit code 1.
 */
export async function withDatabase(
  configPath: string | undefined,
  options: DatabaseSessionOptions,
  body: (config: SmsGateConfig, database: Database) => Promise<number>,
): Promise<number> {
  let database: Database | undefined;
  try {
    const config = loadConfig(configPath, process.env, { purpose: 'admin' });
    // A missing SQLite file is refused (DATABASE_NOT_FOUND naming it), not created empty: that would
    // hide a deleted database. Only a command that sets up an installation passes createIfMissing.
    database = await openDatabase(config.database, { migrate: options.migrate, maxConnections: 2, createIfMissing: options.createIfMissing ?? false });
    return await body(config, database);
  } catch (err) {
    if (!isGatewayError(err)) throw err;
    process.stderr.write(`smsgate: ${maskKnownSecrets(err.message)}\n`);
    return exitCodeFor(err.code);
  } finally {
    await database?.close();
  }
}

/**
 * Runs `body` with the store's ports (the composition root of the CLI: the one place that picks the
 * backend's ports); failures as withDatabase.
 */
export function withPorts(
  configPath: string | undefined,
  options: DatabaseSessionOptions,
  body: (session: StoreSession) => Promise<number>,
): Promise<number> {
  return withDatabase(configPath, options, (config, database) => {
    if (database.kind === 'postgres') {
      let ports: StorePorts | undefined;
      return body({
        config,
        store: undefined,
        get ports() {
          return (ports ??= createPgStores(database.pool));
        },
        // A PostgreSQL database is backed up with PostgreSQL's own tools (pg_dump, a replica).
        backup: undefined,
      });
    }
    const { store } = database;
    let ports: StorePorts | undefined;
    return body({
      config,
      store,
      // Built on first use: the stores prepare their statements against the schema, and `db backup`
      // (migrate: false) must copy a database whatever its schema version, without preparing any.
      get ports() {
        return (ports ??= sqliteStorePorts(store));
      },
      backup: sqliteBackup(store),
    });
  });
}

export function withAdminSession(configPath: string | undefined, body: (session: AdminSession) => Promise<number>): Promise<number> {
  return withPorts(configPath, { migrate: true }, async ({ config, ports }) => {
    // No new key beside sealed secrets (secretBoxForDatabase): it would open none of them.
    const secretBox = secretBoxForDatabase(config.database.keyFile, await sealedSecretOf(ports.auth), describeDatabase(config.database));
    const auth = await AuthService.create(ports.auth, config.auth, secretBox, { logger: silentLogger() });
    return body({ config, ports, auth });
  });
}

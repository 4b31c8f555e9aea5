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
import type { SessionOptions, StoreSession as BackendSession } from '../gateway/backend.js';
import { backendFor } from '../gateway/backends.js';
import { loadConfig, type SmsGateConfig } from '../gateway/config.js';
import { isGatewayError } from '../common/errors.js';
import { silentLogger } from '../common/log.js';
import { exitCodeFor } from './coded-exit.js';
import { sealedSecretOf, secretBoxForDatabase } from '../store/secret-box.js';
import type { StorePorts } from '../store/store-ports.js';

/** An open database as the commands use it: the backend's session (src/gateway/backend.ts) and the config. */
export interface StoreSession extends Omit<BackendSession, 'close'> {
  config: SmsGateConfig;
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

/**
 * Runs `body` with the store's ports on the database the config selects (SQLite `database.path` or
 * PostgreSQL `database.url`), opened through the gateway's backend factory (src/gateway/backends.ts:
 * the one place that picks the backend); coded failures become a message on stderr and exit code 1.
 */
export async function withPorts(
  configPath: string | undefined,
  options: SessionOptions,
  body: (session: StoreSession) => Promise<number>,
): Promise<number> {
  let session: BackendSession | undefined;
  try {
    const config = loadConfig(configPath, process.env, { purpose: 'admin' });
    session = await backendFor(config.database).openSession(config.database, options);
    const opened = session;
    return await body({
      config,
      get ports() {
        return opened.ports;
      },
      backup: opened.backup,
      store: opened.store,
    });
  } catch (err) {
    if (!isGatewayError(err)) throw err;
    process.stderr.write(`smsgate: ${maskKnownSecrets(err.message)}\n`);
    return exitCodeFor(err.code);
  } finally {
    await session?.close();
  }
}

export function withAdminSession(configPath: string | undefined, body: (session: AdminSession) => Promise<number>): Promise<number> {
  return withPorts(configPath, { migrate: true }, async ({ config, ports }) => {
    // No new key beside sealed secrets (secretBoxForDatabase): it would open none of them.
    const secretBox = secretBoxForDatabase(config.database.keyFile, await sealedSecretOf(ports.auth), describeDatabase(config.database));
    const auth = await AuthService.create(ports.auth, config.auth, secretBox, { logger: silentLogger() });
    return body({ config, ports, auth });
  });
}

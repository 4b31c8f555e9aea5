/**
 * The SQLite backend (`database.path`): one gateway per file, the stores on one better-sqlite3
 * connection, the engine's synchronous store on the same connection, and the webhook sender on its
 * own thread when it can be.
 */
import { databaseTarget } from '../../config/database.js';
import type { DatabaseConfig } from '../../config/types.js';
import { GatewayError } from '../../common/errors.js';
import type { Logger } from '../../common/log.js';
import { defaultKeyFileFor, keyFileWithoutDatabaseProblem, sealedSecretOf, secretBoxForDatabase, sqliteFileIsNew } from '../../store/secret-box.js';
import { openStore, type Store } from '../../store/sqlite/database.js';
import { ServeLock } from '../../store/sqlite/serve-lock.js';
import { sqliteBackup, sqliteStorePorts, type ServeGuard, type StorePorts } from '../../store/store-ports.js';
import { WebhookSender } from '../../webhooks/index.js';
import { WebhookSenderThread } from '../../webhooks/sender-thread.js';
import type { Backend, BackendContext, BackendRuntime, OpenedBackend, SessionOptions, StoreSession } from '../backend.js';
import type { SmsGateConfig } from '../config.js';

export const SQLITE_BACKEND: Backend = {
  kind: 'sqlite',
  openGateway,
  openSession,
};

function sqlitePath(database: DatabaseConfig): { path: string; synchronous: DatabaseConfig['synchronous'] } {
  const target = databaseTarget(database);
  if (target.kind !== 'sqlite') throw new GatewayError('BACKEND_UNSUPPORTED', 'database.path: expected a SQLite database');
  return { path: target.path, synchronous: target.synchronous };
}

async function openGateway(config: SmsGateConfig, { now, logger }: { now: () => number; logger: Logger }): Promise<OpenedBackend> {
  const { path } = sqlitePath(config.database);
  // One gateway per SQLite file (README "serve"): refused at once, before the database is touched.
  const lock: ServeGuard = ServeLock.acquire(path, now);
  const keyFile = config.database.keyFile ?? defaultKeyFileFor(path);
  let store: Store;
  try {
    // A key file beside no database: refused before a new database file is made (secret-box.ts).
    const orphanKey = keyFileWithoutDatabaseProblem(keyFile, path, sqliteFileIsNew(path));
    if (orphanKey !== null) throw orphanKey;
    store = await openStore({ path, synchronous: config.database.synchronous });
  } catch (err) {
    lock.release();
    throw err;
  }
  const close = async (): Promise<void> => {
    await store.close();
    lock.release();
  };
  try {
    const ports = sqliteStorePorts(store);
    const sealed = await sealedSecretOf(ports.auth);
    const emptyBesideKey = keyFileWithoutDatabaseProblem(keyFile, path, sealed === undefined);
    if (emptyBesideKey !== null) throw emptyBesideKey;
    const secretBox = secretBoxForDatabase(keyFile, sealed, path);
    store.file?.onMoved((problem) => logger.error({ path, code: problem.code }, problem.message));
    return {
      ports,
      secretBox,
      close,
      attach: (context) => Promise.resolve(sqliteRuntime(context, { store, path, keyFile, secretBox, close })),
    };
  } catch (err) {
    await close();
    throw err;
  }
}

function sqliteRuntime(
  { config, observed, now, clockInjected, observer }: BackendContext,
  { store, path, keyFile, secretBox, close }: { store: Store; path: string; keyFile: string; secretBox: OpenedBackend['secretBox']; close(): Promise<void> },
): BackendRuntime {
  const observing = observer === undefined ? {} : { observer };
  // The sender runs on its own thread (the second core) when built; an injected clock
  // (tests) or the TypeScript sources keep it in this thread.
  const webhooks: WebhookSender | WebhookSenderThread =
    !clockInjected && WebhookSenderThread.available()
      ? new WebhookSenderThread({
          db: store.db,
          databasePath: path,
          busyTimeoutMs: 5_000,
          keyFile,
          config: config.webhooks,
          logLevel: observed.level,
          logger: observed.child({ part: 'webhooks' }),
          ...observing,
        })
      : new WebhookSender({ store, secretBox, logger: observed.child({ part: 'webhooks' }), config: config.webhooks, now, ...observing });
  return {
    store,
    cluster: undefined,
    engineStore: store,
    webhooks,
    slotGate: undefined,
    node: undefined,
    start: () => Promise.resolve(),
    engineStarted: () => undefined,
    engineStopping: () => Promise.resolve(),
    close,
  };
}

async function openSession(database: DatabaseConfig, options: SessionOptions): Promise<StoreSession> {
  const { path, synchronous } = sqlitePath(database);
  // A missing file is refused (DATABASE_NOT_FOUND naming it), not created empty: that would hide a
  // deleted database. Only a command that sets up an installation passes createIfMissing.
  const store = await openStore({ path, synchronous, createIfMissing: options.createIfMissing ?? false }, { migrate: options.migrate });
  let ports: StorePorts | undefined;
  return {
    store,
    // Built on first use (StoreSession.ports says why).
    get ports() {
      return (ports ??= sqliteStorePorts(store));
    },
    backup: sqliteBackup(store),
    close: () => store.close(),
  };
}

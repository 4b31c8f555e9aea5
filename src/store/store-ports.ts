/**
 * Every store the code outside the engine and the webhook sender uses, as async ports.
 * The API, auth, campaigns, inbound, the admin listener and every CLI command take a
 * `StorePorts` and await it; none of them sees a SQLite connection. The composition root (src/index.ts,
 * src/cli/admin-session.ts) builds one: `sqliteStorePorts(store)` here, or a PostgreSQL set whose
 * members implement the same `Async<...>` types, with no other change.
 *
 * Contract of every member: one method is one atomic unit of work (its own transaction inside the
 * store); a caller never holds a transaction open across an await.
 */
import { AdminQueries } from './sqlite/admin-queries.js';
import { AuthStore } from './sqlite/auth-store.js';
import { backupDatabase, type BackupProgress, type BackupResult } from './sqlite/backup.js';
import { CampaignRequestStore } from './sqlite/campaign-request-store.js';
import { CampaignStore } from './sqlite/campaign-store.js';
import type { CreditStore } from './credit-store-port.js';
import { SqliteCreditStore } from './sqlite/credit-store.js';
import type { SmppAccountStore, SmppSessionRegistry } from './smpp-account-port.js';
import { SqliteSmppAccountStore, SqliteSmppSessionRegistry } from './sqlite/smpp-account-store.js';
import type { Store } from './sqlite/database.js';
import { IdempotencyStore } from './sqlite/idempotency-store.js';
import { InboundStore } from './sqlite/inbound-store.js';
import { asyncPort, type Async } from './ports.js';
import { StatusQueries } from './sqlite/status-store.js';
import { UndecodablePduStore } from './sqlite/undecodable-pdu-store.js';
import {
  countOutboxByState,
  listDeadLetters,
  outboxStatesOf,
  requeueDeadLetters,
  type DeadLetterFilter,
  type DeadLetterRow,
  type OutboxState,
} from './sqlite/webhook-store.js';

/**
 * The webhook outbox as the admin side uses it (`smsgate webhook list|replay`, the status page's
 * replay button). Method names and arguments are webhook-store.ts's functions minus `db`, as the
 * `WebhookStore` class is agreed to have them, so `Async<WebhookStore>` (PostgreSQL's too) fits here.
 */
export interface WebhookOutboxAdmin {
  countOutboxByState(): Promise<Record<OutboxState, number>>;
  listDeadLetters(filter?: DeadLetterFilter): Promise<DeadLetterRow[]>;
  outboxStatesOf(ids: readonly number[]): Promise<OutboxState[]>;
  /** Dead letters back to pending, due now, in one transaction; the ids re-queued. */
  requeueDeadLetters(filter: Omit<DeadLetterFilter, 'maxRows'>, nowMs: number): Promise<number[]>;
}

/**
 * The stores of everything outside the engine and the webhook sender. Each member's methods are
 * its SQLite class's, each returning a promise; an implementation must make each method one atomic
 * unit of work (one transaction) and keep the SQLite class's results, ordering and refusals.
 */
export interface StorePorts {
  auth: Async<AuthStore>;
  campaigns: Async<CampaignStore>;
  campaignRequests: Async<CampaignRequestStore>;
  inbound: Async<InboundStore>;
  undecodable: Async<UndecodablePduStore>;
  admin: Async<AdminQueries>;
  status: Async<StatusQueries>;
  webhooks: WebhookOutboxAdmin;
  credits: CreditStore;
  /** Idempotency-Key of POST /v1/campaign: who holds a key and what it answers. */
  idempotency: Async<IdempotencyStore>;
  /** The SMPP server's customer accounts (`smsgate smpp-account`, the bind check). */
  smppAccounts: SmppAccountStore;
  /** Every node's bound customer sessions: bind limits across the cluster. */
  smppSessions: SmppSessionRegistry;
}

/** The ports over one SQLite store: each class prepares its statements once, here. */
export function sqliteStorePorts(store: Pick<Store, 'db'> & { file?: Store['file'] }): StorePorts {
  const { db } = store;
  const webhooks = {
    countOutboxByState: () => countOutboxByState(db),
    listDeadLetters: (filter?: DeadLetterFilter) => listDeadLetters(db, filter),
    outboxStatesOf: (ids: readonly number[]) => outboxStatesOf(db, ids),
    requeueDeadLetters: (filter: Omit<DeadLetterFilter, 'maxRows'>, nowMs: number) => requeueDeadLetters(db, filter, nowMs),
  };
  return {
    auth: asyncPort(new AuthStore(db)),
    campaigns: asyncPort(new CampaignStore(db)),
    campaignRequests: asyncPort(new CampaignRequestStore(db)),
    inbound: asyncPort(new InboundStore(db)),
    undecodable: asyncPort(new UndecodablePduStore(db)),
    admin: asyncPort(new AdminQueries(db)),
    status: asyncPort(new StatusQueries(db, store.file)),
    webhooks: asyncPort(webhooks),
    credits: asyncPort(new SqliteCreditStore(db)),
    idempotency: asyncPort(new IdempotencyStore(db)),
    smppAccounts: asyncPort(new SqliteSmppAccountStore(db)),
    smppSessions: asyncPort(new SqliteSmppSessionRegistry(db)),
  };
}

/**
 * `smsgate db backup`: an online copy of the database into one file. SQLite's is its backup API
 * (src/store/sqlite/backup.ts); a backend without one (PostgreSQL: pg_dump is the operator's tool) has none,
 * and the command says so.
 */
export interface DatabaseBackup {
  backup(file: string, onProgress?: (progress: BackupProgress) => void): Promise<BackupResult>;
}

export function sqliteBackup(store: Pick<Store, 'db'>): DatabaseBackup {
  return { backup: (file, onProgress) => backupDatabase(store.db, file, onProgress) };
}

/** The one-gateway-per-database guard the composition root holds while serving (src/store/sqlite/serve-lock.ts). */
export type { ServeGuard } from './sqlite/serve-lock.js';

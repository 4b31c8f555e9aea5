/**
 * The SMPP server's customer accounts and their live binds: two interfaces, each with a SQLite
 * (src/store/sqlite/smpp-account-store.ts) and a PostgreSQL (src/store/postgres/smpp-account-store.ts)
 * implementation.
 *
 * Contract of every method: one atomic unit of work (one transaction). A password is handed over
 * as its hash (src/auth/password.ts hashPassword) and only ever stored as that; no method returns
 * it except findForBind, which the bind check needs.
 */
import { GatewayError } from '../common/errors.js';
import type { SmppAccountRow, SmppServerSessionRow } from './entities.js';

export interface NewSmppAccount {
  clientName: string;
  systemId: string;
  passwordHash: string;
  /** null: no limit. */
  maxBinds: number | null;
  /** Canonical CIDR blocks (src/smpp-server/accounts/allow-ip.ts formatIpBlock); empty: any address. */
  allowIps: readonly string[];
}

/** An account as `smpp-account list` shows it (never its password hash). */
export interface SmppAccountListing {
  systemId: string;
  clientName: string;
  maxBinds: number | null;
  allowIps: string[];
  createdAt: number;
  updatedAt: number;
}

/**
 * An account as the bind check uses it: the shape of SmppAccount (src/smpp-server/contracts.ts),
 * declared here because the store is an inner layer and imports nothing of the SMPP server
 * (test/architecture/no-import-cycles.test.ts); the bind check hands it on as an SmppAccount,
 * which the compiler checks.
 */
export interface StoredSmppAccount {
  id: number;
  systemId: string;
  clientId: number;
  clientName: string;
  /** null: no limit. */
  maxBinds: number | null;
  /** CIDR blocks; empty: any address. */
  allowIps: readonly string[];
}

/** What a bind is checked against. */
export interface SmppBindCredentials {
  account: StoredSmppAccount;
  passwordHash: string;
  /** A deactivated client's accounts cannot bind (as its users cannot log in). */
  clientActive: boolean;
}

/**
 * The operator's accounts (`smsgate smpp-account ...`) and the bind check's read of them. Every
 * read goes to the database, so a change made while `serve` runs applies at the next bind.
 */
export interface SmppAccountStore {
  /** CLIENT_NOT_FOUND for an unknown client, SMPP_ACCOUNT_EXISTS for a system_id in use; nothing written then. */
  add(account: NewSmppAccount, nowMs: number): Promise<SmppAccountListing>;
  /** Every account, by system_id. */
  list(): Promise<SmppAccountListing[]>;
  /**
   * SMPP_ACCOUNT_NOT_FOUND for an unknown system_id. Its session rows and waiting deliveries go
   * with it (ON DELETE CASCADE); sessions bound now stay bound until they end.
   */
  remove(systemId: string): Promise<void>;
  /** SMPP_ACCOUNT_NOT_FOUND for an unknown system_id. */
  setPassword(systemId: string, passwordHash: string, nowMs: number): Promise<void>;
  /** The account a bind names, with its hash; undefined when no account has that system_id. */
  findForBind(systemId: string): Promise<SmppBindCredentials | undefined>;
}

/** A live session row with its account's system_id, for the status page. */
export interface LiveServerSession extends SmppServerSessionRow {
  system_id: string;
}

/**
 * Every bound customer session on every node (smpp_server_sessions), so a bind limit holds across
 * the cluster. A row is live while heartbeat_at >= the caller's staleBeforeMs: a node that died
 * stops refreshing its rows, and they stop counting.
 */
export interface SmppSessionRegistry {
  /**
   * Inserts `row` if its account holds fewer than `maxBinds` live sessions (null: no limit), and
   * says whether it did. Atomic across the cluster: two nodes binding the account's last slot at
   * once never both get it. Rows of the account that are no longer live are deleted on the way.
   * SMPP_ACCOUNT_NOT_FOUND when the account was removed meanwhile.
   */
  tryRegister(row: SmppServerSessionRow, maxBinds: number | null, staleBeforeMs: number): Promise<boolean>;
  /**
   * Refreshes the node's rows of `sessionIds`; returns the ids that had no row of this node any
   * more (deleted as stale while the node was stalled: the slot may have been given away).
   */
  heartbeat(nodeId: string, sessionIds: readonly string[], nowMs: number): Promise<string[]>;
  /** The session ended: its slot is free. No row: nothing to do. */
  unregister(sessionId: string): Promise<void>;
  /** Deletes every row of `nodeId` (a restarted node's leftovers); how many. */
  removeNode(nodeId: string): Promise<number>;
  /** Every live session of the cluster, oldest bind first. */
  listLive(staleBeforeMs: number): Promise<LiveServerSession[]>;
}

/**
 * The bind limit, decided once for both backends: an account with `maxBinds` may hold that many
 * live sessions across the cluster. null: no limit.
 */
export function bindSlotFree(liveSessions: number, maxBinds: number | null): boolean {
  return maxBinds === null || liveSessions < maxBinds;
}

/** allow_ips as stored: a JSON array of strings; anything else reads as one unreadable block (allowing nothing). */
export function allowIpsOf(json: string): string[] {
  try {
    const value: unknown = JSON.parse(json);
    if (Array.isArray(value) && value.every((v): v is string => typeof v === 'string')) return value;
  } catch {
    // falls through
  }
  return [`unreadable:${json}`];
}

type AccountColumns = Pick<SmppAccountRow, 'system_id' | 'max_binds' | 'allow_ips' | 'created_at' | 'updated_at'>;

/** An account with its client, the same text on both backends (the WHERE clause is each one's own). */
export const ACCOUNT_WITH_CLIENT = `SELECT a.id, a.system_id, a.client_id, a.password_hash, a.max_binds, a.allow_ips, a.created_at, a.updated_at,
  c.name AS client_name, c.active AS client_active
  FROM smpp_accounts a JOIN clients c ON c.id = a.client_id`;

/** A live session with its account's system_id, the same text on both backends (the WHERE clause is each one's own). */
export const LIVE_SESSIONS = `SELECT s.id, s.account_id, s.node_id, s.bind_type, s.address, s.bound_at, s.heartbeat_at, a.system_id
  FROM smpp_server_sessions s JOIN smpp_accounts a ON a.id = s.account_id`;

/** A row (with its client's name) as the listing shows it. */
export function smppAccountListingOf(row: AccountColumns & { client_name: string }): SmppAccountListing {
  return {
    systemId: row.system_id, clientName: row.client_name, maxBinds: row.max_binds, allowIps: allowIpsOf(row.allow_ips),
    createdAt: row.created_at, updatedAt: row.updated_at,
  };
}

/** The bind check's read, from the account row joined with its client. */
export function smppBindCredentialsOf(
  row: Pick<SmppAccountRow, 'id' | 'system_id' | 'client_id' | 'password_hash' | 'max_binds' | 'allow_ips'> & { client_name: string; client_active: number | boolean },
): SmppBindCredentials {
  return {
    account: {
      id: row.id, systemId: row.system_id, clientId: row.client_id, clientName: row.client_name,
      maxBinds: row.max_binds, allowIps: allowIpsOf(row.allow_ips),
    },
    passwordHash: row.password_hash,
    clientActive: row.client_active === 1 || row.client_active === true,
  };
}

/** A row of ACCOUNT_WITH_CLIENT: what both the listing and the bind check read. */
export type SmppAccountWithClientRow = Parameters<typeof smppBindCredentialsOf>[0] & Parameters<typeof smppAccountListingOf>[0];

/** The ids of `sessionIds` the heartbeat found no row of its node for. */
export function missingSessions(sessionIds: readonly string[], refreshedIds: readonly string[]): string[] {
  const refreshed = new Set(refreshedIds);
  return sessionIds.filter((id) => !refreshed.has(id));
}

export function smppAccountExists(systemId: string): GatewayError {
  return new GatewayError('SMPP_ACCOUNT_EXISTS', `an SMPP account with system id "${systemId}" already exists`);
}

export function smppAccountNotFound(systemId: string): GatewayError {
  return new GatewayError('SMPP_ACCOUNT_NOT_FOUND', `no SMPP account with system id "${systemId}"`);
}

/** tryRegister's refusal when the account went away between the bind's read and its registration. */
export function smppAccountRemoved(accountId: number): GatewayError {
  return new GatewayError('SMPP_ACCOUNT_NOT_FOUND', `SMPP account ${accountId} was removed`);
}

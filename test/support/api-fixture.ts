/**
 * A real API on 127.0.0.1:<ephemeral> over a real SQLite file in a temp dir, with accounts seeded
 * the way the admin CLI stores them. Used by the API and campaign tests, the engine's tests and
 * bench/api.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createApiApp } from '../../src/api/app.js';
import type { ApiAuthenticator, ApiBearerResult, ApiIdentity } from '../../src/api/auth-port.js';
import { generatePat, hashPat } from '../../src/auth/pat.js';
import { CampaignProcessor, CampaignService } from '../../src/campaigns/index.js';
import { silentLogger, type Logger } from '../../src/log.js';
import { openStore, type Store } from '../../src/store/database.js';

export const FIXTURE_PAT_PREFIX = 'smsgate';

export interface ApiFixtureOptions {
  maxBodyBytes?: number;
  /** Start the background processor (default true). Off: call fixture.processor.processOnce(). */
  startProcessor?: boolean;
  synchronous?: 'FULL' | 'NORMAL';
  logger?: Logger;
}

export interface AccountOptions {
  clientName?: string;
  username?: string;
  admin?: boolean;
  userActive?: boolean;
  clientActive?: boolean;
  senders?: ReadonlyArray<{ name: string; type: 0 | 1 | 2 }>;
}

export interface Account {
  clientId: number;
  userId: number;
  /** A personal access token, ready for `Authorization: Bearer`. */
  token: string;
}

export interface ApiFixture {
  baseUrl: string;
  dir: string;
  dbPath: string;
  store: Store;
  campaigns: CampaignService;
  processor: CampaignProcessor;
  createAccount(options?: AccountOptions): Account;
  /** fetch against the fixture with a bearer token and a JSON body. */
  postCampaign(token: string | undefined, body: unknown): Promise<Response>;
  getSummary(token: string | undefined, id: string): Promise<Response>;
  close(): Promise<void>;
}

export async function startApiFixture(options: ApiFixtureOptions = {}): Promise<ApiFixture> {
  const dir = mkdtempSync(join(tmpdir(), 'smsgate-api-'));
  const dbPath = join(dir, 'smsgate.sqlite');
  const logger = options.logger ?? silentLogger();
  const store = await openStore({ path: dbPath, synchronous: options.synchronous ?? 'FULL' });
  const processor = new CampaignProcessor({ store, logger, pollIntervalMs: 50 });
  const campaigns = new CampaignService({ store, logger, onQueued: () => processor.wake() });
  const auth = new PatAuthenticator(store);
  const app = createApiApp({
    store,
    auth,
    campaigns,
    config: { api: { host: '127.0.0.1', port: 0, maxBodyBytes: options.maxBodyBytes ?? 67_108_864 } },
    logger,
  });
  const server: Server = await new Promise((resolve) => {
    const s = app.listen(0, '127.0.0.1', () => resolve(s));
  });
  const { port } = server.address() as AddressInfo;
  const baseUrl = `http://127.0.0.1:${port}`;
  if (options.startProcessor ?? true) processor.start();
  let accounts = 0;

  return {
    baseUrl,
    dir,
    dbPath,
    store,
    campaigns,
    processor,
    createAccount(account: AccountOptions = {}): Account {
      accounts++;
      const nowMs = Date.now();
      const clientName = account.clientName ?? `client-${accounts}`;
      const clientId = Number(
        store.db.prepare('INSERT INTO clients (name, active, created_at) VALUES (?, ?, ?)').run(
          clientName, account.clientActive === false ? 0 : 1, nowMs,
        ).lastInsertRowid,
      );
      const userId = Number(
        store.db.prepare(
          'INSERT INTO users (client_id, username, password_hash, is_admin, active, created_at) VALUES (?, ?, ?, ?, ?, ?)',
        ).run(clientId, account.username ?? `user-${accounts}`, 'unused', account.admin === false ? 0 : 1,
          account.userActive === false ? 0 : 1, nowMs).lastInsertRowid,
      );
      const token = generatePat(FIXTURE_PAT_PREFIX);
      store.db.prepare(
        'INSERT INTO personal_access_tokens (user_id, token_hash, token_hint, created_at) VALUES (?, ?, ?, ?)',
      ).run(userId, hashPat(token), 'fixture', nowMs);
      for (const sender of account.senders ?? []) {
        store.db.prepare('INSERT INTO senders (client_id, name, type, created_at) VALUES (?, ?, ?, ?)').run(
          clientId, sender.name, sender.type, nowMs,
        );
      }
      return { clientId, userId, token };
    },
    postCampaign(token, body) {
      return fetch(`${baseUrl}/v1/campaign`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...(token === undefined ? {} : { authorization: `Bearer ${token}` }) },
        body: typeof body === 'string' ? body : JSON.stringify(body),
      });
    },
    getSummary(token, id) {
      return fetch(`${baseUrl}/v1/campaign/${id}`, {
        headers: token === undefined ? {} : { authorization: `Bearer ${token}` },
      });
    },
    async close() {
      await processor.stop();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** PAT-only authenticator over the stored hashes, used until src/auth's AuthService lands. */
class PatAuthenticator implements ApiAuthenticator {
  constructor(private readonly store: Store) {}

  async authenticate(header: string | undefined): Promise<ApiBearerResult> {
    if (header === undefined) return { ok: false, reason: 'missing' };
    const match = /^Bearer +(\S+)$/i.exec(header);
    if (match === null) return { ok: false, reason: 'malformed' };
    const row = this.store.db.prepare(
      `SELECT u.id AS userId, u.client_id AS clientId, c.name AS clientName, u.username, u.is_admin AS isAdmin,
              u.active AS userActive, c.active AS clientActive, t.revoked_at AS revokedAt
       FROM personal_access_tokens t JOIN users u ON u.id = t.user_id JOIN clients c ON c.id = u.client_id
       WHERE t.token_hash = ?`,
    ).get(hashPat(match[1]!)) as (ApiIdentity & { userActive: number; clientActive: number; revokedAt: number | null }) | undefined;
    if (row === undefined) return { ok: false, reason: 'invalid' };
    if (row.revokedAt !== null) return { ok: false, reason: 'revoked' };
    this.active.set(row.userId, row.userActive === 1 && row.clientActive === 1);
    return { ok: true, via: 'pat', identity: { userId: row.userId, clientId: row.clientId, clientName: row.clientName, username: row.username, isAdmin: Boolean(row.isAdmin) } };
  }

  private readonly active = new Map<number, boolean>();

  isRecognizedAdministrator(identity: ApiIdentity): boolean {
    return identity.isAdmin && this.active.get(identity.userId) === true;
  }
}

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
import type { PricingRule } from '../../src/accounts/credits.js';
import { createApiApp } from '../../src/api/app.js';
import { AuthService } from '../../src/auth/index.js';
import { CampaignProcessor, CampaignService } from '../../src/campaigns/index.js';
import { silentLogger, type Logger } from '../../src/common/log.js';
import { openStore, type Store } from '../../src/store/sqlite/database.js';
import { sqliteStorePorts, type StorePorts } from '../../src/store/store-ports.js';
import { SecretBox } from '../../src/store/secret-box.js';
import type { ApiConfig, AuthConfig } from '../../src/config/types.js';
import { fetchChecked } from './openapi-check.js';

export const FIXTURE_AUTH_CONFIG: AuthConfig = {
  patPrefix: 'smsgate',
  clientId: 'messaging-api',
  issuer: 'smsgate-test',
  accessTokenSeconds: 300,
  refreshTokenSeconds: 1800,
  legacy: { clientId: 'legacy-api', accessTokenSeconds: 120, refreshTokenSeconds: 1200 },
  bruteForce: { windowMs: 60_000, maxFailuresPerUsername: 1000, maxFailuresPerAddress: 1000 },
};

/** Passwords in fixtures are hashed with a cheap scrypt cost; the real cost is AUTH's to test. */
const FIXTURE_SCRYPT_COST = { N: 1024, r: 8, p: 1 };
export const FIXTURE_PASSWORD = 'correct horse battery staple';

export interface ApiFixtureOptions {
  maxBodyBytes?: number;
  /** api.maxBufferedBytes; left out: the app's default. */
  maxBufferedBytes?: number;
  /** api.maxBufferedBytesPerClient, maxUploadsPerClient, minBodyBytesPerSecond, bodyRateGraceMs; left out: the app's defaults. */
  bodyLimits?: Pick<ApiConfig, 'maxBufferedBytesPerClient' | 'maxUploadsPerClient' | 'minBodyBytesPerSecond' | 'bodyRateGraceMs'>;
  /** Start the background processor (default true). Off: call fixture.processor.processOnce(). */
  startProcessor?: boolean;
  synchronous?: 'FULL' | 'NORMAL';
  logger?: Logger;
  /** Wraps the SQLite ports the services get (test/support/deferred-ports.ts); default as they are. */
  wrapPorts?: (ports: StorePorts) => StorePorts;
  /** Config `pricing` for the campaign service and processor; default none (every part 1 credit). */
  pricing?: readonly PricingRule[];
  /**
   * Run in this directory (its smsgate.sqlite and smsgate.key), which close() leaves in place: a
   * second fixture on the same dir is the gateway restarted over the same file. Default: a new
   * temp dir, removed by close().
   */
  dir?: string;
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
  /** The async ports the services run on, over `store`. */
  ports: StorePorts;
  campaigns: CampaignService;
  processor: CampaignProcessor;
  auth: AuthService;
  createAccount(options?: AccountOptions): Promise<Account>;
  /** fetch against the fixture with a bearer token and a JSON body. */
  postCampaign(token: string | undefined, body: unknown): Promise<Response>;
  getSummary(token: string | undefined, id: string): Promise<Response>;
  close(): Promise<void>;
}

/**
 * Under vitest every response the fixture's helpers receive is checked against the OpenAPI document
 *; benches that reuse the fixture fetch unchecked.
 */
const fetchFor: (url: string, init?: RequestInit) => Promise<Response> = process.env['VITEST'] === undefined ? fetch : fetchChecked;

export async function startApiFixture(options: ApiFixtureOptions = {}): Promise<ApiFixture> {
  const dir = options.dir ?? mkdtempSync(join(tmpdir(), 'smsgate-api-'));
  const dbPath = join(dir, 'smsgate.sqlite');
  const logger = options.logger ?? silentLogger();
  const store = await openStore({ path: dbPath, synchronous: options.synchronous ?? 'FULL' });
  const ports = (options.wrapPorts ?? ((p: StorePorts) => p))(sqliteStorePorts(store));
  const pricing = options.pricing === undefined ? {} : { pricing: options.pricing };
  const processor = new CampaignProcessor({ store: ports, logger, pollIntervalMs: 50, ...pricing });
  const campaigns = new CampaignService({ store: ports, logger, onQueued: () => processor.wake(), ...pricing });
  const auth = await AuthService.create(ports.auth, FIXTURE_AUTH_CONFIG, SecretBox.fromKeyFile(join(dir, 'smsgate.key')), {
    logger,
    scryptCost: FIXTURE_SCRYPT_COST,
  });
  const app = createApiApp({
    ports,
    auth,
    campaigns,
    config: {
      api: {
        host: '127.0.0.1', port: 0, maxBodyBytes: options.maxBodyBytes ?? 67_108_864,
        ...(options.maxBufferedBytes === undefined ? {} : { maxBufferedBytes: options.maxBufferedBytes }),
        ...options.bodyLimits,
      },
    },
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
    ports,
    campaigns,
    processor,
    auth,
    async createAccount(account: AccountOptions = {}): Promise<Account> {
      accounts++;
      const clientName = account.clientName ?? `client-${accounts}`;
      const username = account.username ?? `user-${accounts}`;
      const client = await auth.createClient({ name: clientName });
      const user = await auth.createUser({ clientName, username, password: FIXTURE_PASSWORD, isAdmin: account.admin ?? true });
      const token = await auth.createPersonalAccessToken(username);
      for (const sender of account.senders ?? []) await auth.addSender({ clientName, sender: sender.name, type: sender.type });
      // The admin CLI has no deactivate command yet; the columns are what AuthService reads.
      if (account.clientActive === false) store.db.prepare('UPDATE clients SET active = 0 WHERE id = ?').run(client.id);
      if (account.userActive === false) store.db.prepare('UPDATE users SET active = 0 WHERE id = ?').run(user.id);
      return { clientId: client.id, userId: user.id, token };
    },
    postCampaign(token, body) {
      return fetchFor(`${baseUrl}/v1/campaign`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...(token === undefined ? {} : { authorization: `Bearer ${token}` }) },
        body: typeof body === 'string' ? body : JSON.stringify(body),
      });
    },
    getSummary(token, id) {
      return fetchFor(`${baseUrl}/v1/campaign/${id}`, {
        headers: token === undefined ? {} : { authorization: `Bearer ${token}` },
      });
    },
    async close() {
      await processor.stop();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await store.close();
      if (options.dir === undefined) rmSync(dir, { recursive: true, force: true });
    },
  };
}

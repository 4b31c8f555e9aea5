/**
 * The campaign processor of a cluster node on a real PostgreSQL: it claims and
 * writes under its node id, so a campaign another live node is processing is left to that node,
 * and a campaign whose claim was taken over while it was being written is not marked ready by the
 * node that lost it.
 */
import { Writable } from 'node:stream';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { CampaignProcessor } from '../../src/campaigns/campaign-processor.js';
import type { NodeIdSource } from '../../src/common/node-id.js';
import { createLogger, silentLogger } from '../../src/common/log.js';
import { createPgStores, type PgStores } from '../../src/store/postgres/stores.js';
import type { PgPool } from '../../src/store/postgres/pool.js';
import { usePostgresSuite } from '../support/postgres-suite.js';
import { seedClient, T0_MS } from '../store/conformance/seed.js';

const suite = usePostgresSuite();

async function queued(stores: PgStores, id: string, recipients: number): Promise<void> {
  const { clientId, userId } = await seedClient(stores, `client-${id}`);
  await stores.auth.insertSender({ clientId, name: 'ACME', type: 0 }, T0_MS);
  const request = Array.from({ length: recipients }, (_, i) => ({ msisdn: `087${String(i).padStart(7, '0')}`, clientReference: null }));
  await stores.campaigns.insertCampaign({
    id, clientId, userId, state: 'queued', name: 'spring', sender: 'ACME', text: 'hello', sendAtLocal: null,
    createAsDraft: false, shouldSaveList: false, requestRecipientsJson: JSON.stringify(request), createdAtMs: T0_MS,
  });
}

async function campaign(pool: PgPool, id: string): Promise<{ state: string; processing_by: string | null; recipients: number }> {
  return (await pool.query<{ state: string; processing_by: string | null; recipients: number }>(
    'SELECT state, processing_by, (SELECT count(*)::int FROM recipients WHERE campaign_id = $1) AS recipients FROM campaigns WHERE id = $1', [id])).rows[0]!;
}

function processorOn(stores: PgStores, node: NodeIdSource): CampaignProcessor {
  return new CampaignProcessor({ store: stores, logger: silentLogger(), node });
}

describe('the campaign processor on a cluster node (PostgreSQL)', () => {
  it("leaves a campaign another node is processing to that node, and processes the rest under its own id", async () => {
    const [database] = await suite.openNodes(1);
    const stores = createPgStores(database!.pool);
    await queued(stores, 'c-theirs', 3);
    await queued(stores, 'c-mine', 2);
    expect(await stores.campaigns.claimForProcessing('c-theirs', 'node-b')).toBeDefined();

    expect(await processorOn(stores, { nodeId: () => 'node-a' }).processOnce()).toBe(1);
    expect(await campaign(database!.pool, 'c-theirs')).toEqual({ state: 'processing', processing_by: 'node-b', recipients: 0 });
    expect(await campaign(database!.pool, 'c-mine')).toEqual({ state: 'ready', processing_by: null, recipients: 2 });
  });

  it('does not mark ready a campaign whose claim was taken over while it was written', async () => {
    const [database] = await suite.openNodes(1);
    const stores = createPgStores(database!.pool);
    await queued(stores, 'c-1', 3);
    // The node's claim is taken over right after it claimed (its lease ran out and another node
    // claimed it): every later write of this node is fenced.
    const claimThenLose = async (id: string, nodeId?: string) => {
      const claimed = await stores.campaigns.claimForProcessing(id, nodeId);
      await database!.pool.query(`UPDATE campaigns SET processing_by = 'node-b' WHERE id = $1`, [id]);
      return claimed;
    };
    const campaigns = new Proxy(stores.campaigns, {
      get: (target, name) => (name === 'claimForProcessing' ? claimThenLose : (Reflect.get(target, name) as unknown)),
    });
    const fencedStores: PgStores = { ...stores, campaigns };
    expect(await processorOn(fencedStores, { nodeId: () => 'node-a' }).processOnce()).toBe(0);
    expect(await campaign(database!.pool, 'c-1')).toEqual({ state: 'processing', processing_by: 'node-b', recipients: 0 });
  });

  it('logs a database that is gone once, not at every poll, and says when it works again', async () => {
    const [database] = await suite.openNodes(1);
    const stores = createPgStores(database!.pool);
    let lookups = 0;
    const campaigns = new Proxy(stores.campaigns, {
      get: (target, name) => {
        const value = Reflect.get(target, name) as unknown;
        if (name !== 'unprocessedCampaignIds' || typeof value !== 'function') return value;
        return (...args: unknown[]) => {
          lookups++;
          return (value as (...a: unknown[]) => Promise<string[]>).apply(target, args);
        };
      },
    });
    const lines: { level: number; msg: string }[] = [];
    const logger = createLogger({ level: 'info', destination: new Writable({ write(chunk: Buffer, _e, done) { lines.push(JSON.parse(chunk.toString('utf8')) as { level: number; msg: string }); done(); } }) });
    const processor = new CampaignProcessor({ store: { ...stores, campaigns }, logger, pollIntervalMs: 20, node: { nodeId: () => 'node-a' } });
    suite.afterThisTest(() => processor.stop());
    const name = new URL(database!.describe).pathname.slice(1);
    const admin = new pg.Client({ connectionString: suite.server().urlFor('postgres') });
    await admin.connect();
    suite.afterThisTest(() => admin.end());
    await admin.query(`ALTER DATABASE ${name} ALLOW_CONNECTIONS false`);
    await admin.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1', [name]);
    processor.start();
    try {
      await expect.poll(() => lookups, { timeout: 15_000 }).toBeGreaterThanOrEqual(20);
    } finally {
      await admin.query(`ALTER DATABASE ${name} ALLOW_CONNECTIONS true`);
    }
    expect(lines.filter((l) => l.level === 50)).toHaveLength(1);
    expect(lines.filter((l) => l.level === 50)[0]!.msg).toMatch(/^campaign processing failed; retrying/);
    await expect.poll(() => lines.some((l) => l.msg === 'campaign processing works again'), { timeout: 15_000 }).toBe(true);
  });
});

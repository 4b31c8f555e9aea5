/**
 * credits.lowThreshold on a cluster: two nodes (createGateway with `database.url`, in this process)
 * on one real PostgreSQL both run the low-credits check, yet a client falling below the threshold
 * is logged once for the whole cluster, its return once, and its next fall once more. Credits move
 * through the ledger writer the API and the engine use on PostgreSQL. (That two nodes checking at
 * the same moment report a crossing once is shown on the store itself: test/admin/credit-status.test.ts.)
 */
import { Writable } from 'node:stream';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { CreditMovement } from '../../src/accounts/credits.js';
import { createLogger } from '../../src/common/log.js';
import { resolveConfigFromObject } from '../../src/gateway/config.js';
import { createGateway } from '../../src/index.js';
import { applyCreditMovements } from '../../src/store/postgres/credit-ledger.js';
import { inTransaction } from '../../src/store/postgres/pool.js';
import { createPgStores } from '../../src/store/postgres/stores.js';
import { openDatabase } from '../../src/store/sqlite/database.js';
import { tempDir, until } from '../e2e/e2e-setup.js';
import { usePostgresSuite } from '../support/postgres-suite.js';

const suite = usePostgresSuite();
const THRESHOLD = 1_000;

describe('the low-credits warning on a cluster', () => {
  it('is logged by one node per crossing, not by each', async () => {
    const url = await suite.server().createDatabase();
    const keyFile = join(tempDir('low-credits-nodes'), 'cluster.key');
    const logs: Record<string, unknown>[] = [];
    const startNode = async (name: string): Promise<void> => {
      const config = resolveConfigFromObject({
        database: { url, keyFile },
        api: { host: '127.0.0.1', port: 0 },
        transports: [{ name: 'sim', type: 'simulator' }],
        routes: [{ prefix: '', transport: 'sim' }],
      }, `${name}.json`);
      // credits.lowThreshold, set on the loaded config (the accounts config section declares the key).
      Object.assign(config, { credits: { lowThreshold: THRESHOLD } });
      const destination = new Writable({
        write(chunk: Buffer, _encoding, done) {
          for (const line of chunk.toString('utf8').split('\n')) if (line !== '') logs.push({ ...(JSON.parse(line) as Record<string, unknown>), node: name });
          done();
        },
      });
      const gateway = await createGateway(config, { logger: createLogger({ level: 'info', destination }) });
      suite.afterThisTest(() => gateway.stop());
      await gateway.start();
    };
    await startNode('a');
    await startNode('b');

    const database = await openDatabase({ url, path: 'unused', synchronous: 'FULL', keyFile }, { migrate: false });
    suite.afterThisTest(() => database.close());
    if (database.kind !== 'postgres') throw new Error('expected PostgreSQL');
    const pool = database.pool;
    const clientId = await createPgStores(pool).auth.insertClient({ name: 'acme', webhookUrl: null, webhookSecretEnc: null }, Date.now());
    const move = (credits: number, kind: CreditMovement['kind']): Promise<void> =>
      inTransaction(pool, (tx) => applyCreditMovements(tx, [{ clientId, kind, credits, campaignId: null, note: 'test' }], Date.now()));
    const warnings = (): Record<string, unknown>[] => logs.filter((l) => l['level'] === 40 && l['client'] === 'acme' && l['lowThreshold'] === THRESHOLD);
    const backs = (): Record<string, unknown>[] => logs.filter((l) => l['level'] === 30 && l['client'] === 'acme' && l['lowThreshold'] === THRESHOLD);

    await move(600, 'top-up');
    await until(() => warnings().length, (n) => n >= 1, 20_000, 'the low-credits warning');
    expect(warnings()[0]).toMatchObject({ client: 'acme', available: 600 });

    // Back at the threshold: one info line, and still the one warning from either node.
    await move(400, 'top-up');
    await until(() => backs().length, (n) => n >= 1, 20_000, 'the back-above-threshold line');
    expect(backs()[0]).toMatchObject({ client: 'acme', available: 1_000 });
    expect(warnings()).toHaveLength(1);
    await move(-300, 'correction');
    await until(() => warnings().length, (n) => n >= 2, 20_000, 'the second low-credits warning');
    expect(warnings()[1]).toMatchObject({ client: 'acme', available: 700 });

    expect(warnings()).toHaveLength(2);
    expect(backs()).toHaveLength(1);
  }, 90_000);
});

/**
 * The engine wakes the delivery sender after the commit that stored a customer's receipt (on
 * SQLite after the group commit, on PostgreSQL after the unit's transaction), so a receipt goes
 * out at once on the node that wrote it rather than at the next poll.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { silentLogger } from '../../../src/common/log.js';
import { SINGLE_GATEWAY } from '../../../src/common/node-id.js';
import { CampaignPlans } from '../../../src/engine/campaign-plans.js';
import { ENGINE_DEFAULTS } from '../../../src/engine/config.js';
import type { EngineBackend } from '../../../src/engine/engine-backend.js';
import { PgEngineBackend } from '../../../src/engine/postgres/backend.js';
import { SqliteEngineBackend } from '../../../src/engine/sqlite/backend.js';
import type { Routing } from '../../../src/engine/steps/materialise.js';
import type { CustomerCut } from '../../../src/smpp-server/contracts.js';
import { rows as pgRows } from '../../../src/store/postgres/pool.js';
import { openStore } from '../../../src/store/sqlite/database.js';
import { usePostgresSuite } from '../../support/postgres-suite.js';

const T0_MS = 1_765_100_000_000;
const suite = usePostgresSuite();
let dir: string;
const closers: (() => Promise<void> | void)[] = [];
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'smsgate-engine-wake-'));
});
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

type Sql = (text: string, params?: readonly unknown[]) => Promise<Record<string, unknown>[]>;

/** An SMPP submit of account 3 sent upstream as `up-1`, registered_delivery 1. */
async function seed(sql: Sql): Promise<void> {
  const cut: CustomerCut = { dataCoding: 0, concat: null, registeredDelivery: 1, sourceAddrTon: 5, sourceAddrNpi: 0 };
  await sql(`INSERT INTO clients (id, name, created_at) VALUES (1, 'acme', $1)`, [T0_MS]);
  await sql(`INSERT INTO smpp_accounts (id, system_id, client_id, password_hash, created_at, updated_at) VALUES (3, 'acme1', 1, 'h', $1, $2)`, [T0_MS, T0_MS]);
  await sql(`INSERT INTO campaigns (id, client_id, state, name, sender, text, created_at, smpp_account_id, smpp_submit) VALUES ('c-1', 1, 'ready', 'smpp', 'ACME', 'hi', $1, 3, $2)`,
    [T0_MS, JSON.stringify(cut)]);
  await sql(`INSERT INTO recipients (id, campaign_id, msisdn, dispatch_state) VALUES (10, 'c-1', '353871234567', 'dispatched')`);
  await sql(`INSERT INTO message_parts (id, recipient_id, campaign_id, part_number, parts_total, concat_reference, state, transport, message_id, updated_at)
    VALUES (100, 10, 'c-1', 1, 1, 0, 'submitted', 'carrier', 'up-1', $1)`, [T0_MS]);
}

describe.each(['sqlite', 'postgres'] as const)('the engine wakes the delivery sender (%s)', (backendName) => {
  it('after the commit that stored a customer\'s receipt, with the row already readable', async () => {
    const seen: unknown[] = [];
    let sql: Sql;
    let backend: EngineBackend;
    const smppDeliveries = { wake: () => void sql(`SELECT count(*) AS n FROM smpp_deliveries`).then((r) => seen.push(Number(r[0]?.n))) };
    const common = {
      config: { ...ENGINE_DEFAULTS, receiptRetentionHours: 1 }, logger: silentLogger(), deliveryReceipts: { enqueue: () => false, wake: () => undefined },
      routing: (): Routing => { throw new Error('no routing in this test'); }, plans: new CampaignPlans(), now: () => T0_MS + 1_000, smppDeliveries,
    };
    if (backendName === 'sqlite') {
      const store = await openStore({ path: join(dir, 'engine.sqlite'), synchronous: 'NORMAL' });
      closers.push(() => store.close());
      sql = async (text, params = []) => {
        const statement = store.db.prepare(text.replace(/\$\d+/g, '?'));
        return statement.reader ? statement.all(...params) as Record<string, unknown>[] : (statement.run(...params), []);
      };
      backend = new SqliteEngineBackend({ ...common, store, onCommitTimed: () => undefined });
    } else {
      const { pool } = await suite.open();
      sql = (text, params = []) => pgRows(pool, text, params);
      backend = new PgEngineBackend({ ...common, pool, node: SINGLE_GATEWAY });
    }
    await seed(sql);
    await backend.acceptReceipt('carrier', { messageId: 'up-1', status: 'DELIVRD', final: true, raw: 'id:up-1 stat:DELIVRD' });
    const deadline = Date.now() + 5_000;
    while (seen.length === 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10));
    expect(seen).toEqual([1]);
    expect(await sql(`SELECT expires_at FROM smpp_deliveries`)).toEqual([{ expires_at: T0_MS + 1_000 + 3_600_000 }]);
  });
});

/**
 * smpp_deliveries on both backends (a real SQLite file, a real PostgreSQL): a customer's receipt
 * is written in the commit of the receipt that caused it (and not at all when that commit fails),
 * never as a webhook; rows of one message are leased in order; two PostgreSQL nodes leasing at
 * once never get the same row; waiting rows expire.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { PgReceiptStepStore } from '../../../src/engine/postgres/step-stores.js';
import { SqlitePartChangesStore, SqliteReceiptStepStore } from '../../../src/engine/sqlite/step-stores.js';
import { planReceipts, type ArrivingReceipt } from '../../../src/engine/steps/receipts.js';
import { parseDeliverSm, serializeDeliverSm, type CustomerCut, type DeliverSmFields } from '../../../src/smpp-server/contracts.js';
import { inTransaction, rows as pgRows, type PgPool } from '../../../src/store/postgres/pool.js';
import { PgSmppDeliveryStore } from '../../../src/store/postgres/smpp-delivery-store.js';
import type { CustomerDeliveryWrite, SmppDeliveryStore } from '../../../src/store/smpp-delivery-port.js';
import { openStore, type SqliteDatabase } from '../../../src/store/sqlite/database.js';
import { DispatchStore } from '../../../src/store/sqlite/dispatch-store.js';
import { PartChangeQueries } from '../../../src/store/sqlite/part-change-queries.js';
import { SqliteSmppDeliveryStore } from '../../../src/store/sqlite/smpp-delivery-store.js';
import { silentLogger } from '../../../src/common/log.js';
import type { DeliverResult, DeliveringSession, LocalSessions, ServerSessionInfo } from '../../../src/smpp-server/contracts.js';
import { DeliverySender } from '../../../src/smpp-server/delivery-sender.js';
import { pollUntil } from '../../support/poll-until.js';
import { usePostgresSuite } from '../../support/postgres-suite.js';

const T0_MS = 1_765_100_000_000;
const HOUR_MS = 3_600_000;
const suite = usePostgresSuite();

interface Backend {
  store: SmppDeliveryStore;
  sql(text: string, params?: readonly unknown[]): Promise<Record<string, unknown>[]>;
  /** The engine's receipt step in one transaction; `failAfterWrite` throws before the commit. */
  receipt(messageId: string, status: string, nowMs: number, failAfterWrite?: boolean): Promise<void>;
}

let dir: string;
const closers: (() => Promise<void> | void)[] = [];
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'smsgate-deliveries-'));
});
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

let files = 0;
async function sqliteBackend(): Promise<Backend> {
  const opened = await openStore({ path: join(dir, `db-${++files}.sqlite`), synchronous: 'NORMAL' });
  closers.push(() => opened.close());
  const db: SqliteDatabase = opened.db;
  const dispatch = new DispatchStore(db);
  const queries = new PartChangeQueries(db);
  const sink = { enqueue: () => { throw new Error('an SMPP customer\'s receipt went to the webhook outbox'); }, wake: () => undefined };
  const steps = new SqliteReceiptStepStore(dispatch, queries, new SqlitePartChangesStore(dispatch, queries, sink));
  return {
    store: new SqliteSmppDeliveryStore(db),
    sql: async (text, params = []) => {
      const statement = db.prepare(text.replace(/\$\d+/g, '?'));
      return statement.reader ? statement.all(...params) as Record<string, unknown>[] : (statement.run(...params), []);
    },
    receipt: async (messageId, status, nowMs, failAfterWrite = false) => {
      const items: ArrivingReceipt[] = [{ transport: 'carrier', receipt: { messageId, status, final: true, errorCode: '000', raw: `id:${messageId} stat:${status}` } }];
      db.transaction(() => {
        steps.writeReceipts(planReceipts(items, steps.readReceiptFacts(items), nowMs, { receiptRetentionHours: 72 }), nowMs);
        if (failAfterWrite) throw new Error('the commit fails');
      })();
    },
  };
}

function pgBackend(pool: PgPool): Backend {
  return {
    store: new PgSmppDeliveryStore(pool),
    sql: (text, params = []) => pgRows(pool, text, params),
    receipt: (messageId, status, nowMs, failAfterWrite = false) => inTransaction(pool, async (client) => {
      const items: ArrivingReceipt[] = [{ transport: 'carrier', receipt: { messageId, status, final: true, errorCode: '000', raw: `id:${messageId} stat:${status}` } }];
      const steps = new PgReceiptStepStore(client);
      await steps.writeReceipts(planReceipts(items, await steps.readReceiptFacts(items), nowMs, { receiptRetentionHours: 72 }), nowMs);
      if (failAfterWrite) throw new Error('the commit fails');
    }),
  };
}

const BACKENDS: Record<'sqlite' | 'postgres', () => Promise<Backend>> = {
  sqlite: sqliteBackend,
  postgres: async () => pgBackend((await suite.open()).pool),
};

/** A client with a webhook URL, SMPP accounts 3 (acme1) and 4 (idle), and one submit_sm of account 3 sent upstream as `up-1`. */
async function seed(b: Backend, registeredDelivery = 1): Promise<void> {
  const cut: CustomerCut = { dataCoding: 0, concat: null, registeredDelivery, sourceAddrTon: 5, sourceAddrNpi: 0 };
  await b.sql(`INSERT INTO clients (id, name, created_at, webhook_url) VALUES (1, 'acme', $1, 'https://hooks.example/dlr')`, [T0_MS]);
  await b.sql(`INSERT INTO smpp_accounts (id, system_id, client_id, password_hash, created_at, updated_at) VALUES (3, 'acme1', 1, 'h', $1, $2), (4, 'idle', 1, 'h', $3, $4)`, [T0_MS, T0_MS, T0_MS, T0_MS]);
  await b.sql(`INSERT INTO campaigns (id, client_id, state, name, sender, text, created_at, smpp_account_id, smpp_submit) VALUES ('c-1', 1, 'ready', 'smpp', 'ACME', 'Your code is 4821', $1, 3, $2)`,
    [T0_MS, JSON.stringify(cut)]);
  await b.sql(`INSERT INTO recipients (id, campaign_id, msisdn, dispatch_state) VALUES (10, 'c-1', '353871234567', 'dispatched')`);
  await b.sql(`INSERT INTO message_parts (id, recipient_id, campaign_id, part_number, parts_total, concat_reference, state, transport, message_id, updated_at)
    VALUES (100, 10, 'c-1', 1, 1, 0, 'submitted', 'carrier', 'up-1', $1)`, [T0_MS]);
}

function fields(tag: string): DeliverSmFields {
  return { sourceAddrTon: 1, sourceAddrNpi: 1, sourceAddr: '353871234567', destAddrTon: 5, destAddrNpi: 0, destinationAddr: 'ACME', esmClass: 4, dataCoding: 0, shortMessageHex: Buffer.from(tag).toString('hex') };
}

function row(messageId: string, tag: string, accountId = 3, createdAtMs = T0_MS): CustomerDeliveryWrite {
  return { accountId, kind: 'receipt', messageId, deliverSm: serializeDeliverSm(fields(tag)), createdAtMs, expiresAtMs: createdAtMs + HOUR_MS };
}

function tagOf(d: { deliverSm: string }): string {
  return Buffer.from(parseDeliverSm(d.deliverSm).shortMessageHex, 'hex').toString();
}

describe.each(['sqlite', 'postgres'] as const)('smpp_deliveries (%s)', (name) => {
  it('writes the customer\'s receipt in the receipt\'s own commit, instead of a webhook, and nothing when that commit fails', async () => {
    const b = await BACKENDS[name]();
    await seed(b);
    await expect(b.receipt('up-1', 'DELIVRD', T0_MS + 5_000, true)).rejects.toThrow('the commit fails');
    expect(await b.sql(`SELECT count(*) AS n FROM smpp_deliveries`)).toEqual([{ n: 0 }]);
    expect(await b.sql(`SELECT status FROM recipients WHERE id = 10`)).toEqual([{ status: 'pending' }]);

    await b.receipt('up-1', 'DELIVRD', T0_MS + 5_000);
    expect(await b.sql(`SELECT status FROM recipients WHERE id = 10`)).toEqual([{ status: 'delivered' }]);
    const stored = await b.sql(`SELECT account_id, kind, message_id, state, attempts, next_attempt_at, created_at, expires_at FROM smpp_deliveries`);
    expect(stored).toEqual([{ account_id: 3, kind: 'receipt', message_id: 'c-1', state: 'waiting', attempts: 0, next_attempt_at: T0_MS + 5_000, created_at: T0_MS + 5_000, expires_at: T0_MS + 5_000 + 72 * HOUR_MS }]);
    expect(await b.sql(`SELECT count(*) AS n FROM webhook_outbox`)).toEqual([{ n: 0 }]);
    const [leased] = await b.store.leaseDue([3], 'node-a', 10, T0_MS + 5_000, T0_MS + 65_000);
    const deliverSm = parseDeliverSm(leased?.deliverSm ?? '{}');
    expect(deliverSm).toMatchObject({ esmClass: 4, receiptedMessageId: 'c-1', sourceAddr: '353871234567', destinationAddr: 'ACME', destAddrTon: 5 });
    expect(Buffer.from(deliverSm.shortMessageHex, 'hex').toString('latin1')).toMatch(/^id:c-1 sub:001 dlvrd:001 .* stat:DELIVRD err:000 text:Your code is 4821$/);
  });

  it('registered_delivery 2 (failures only) stores nothing for a delivered message', async () => {
    const b = await BACKENDS[name]();
    await seed(b, 2);
    await b.receipt('up-1', 'DELIVRD', T0_MS + 5_000);
    expect(await b.sql(`SELECT status FROM recipients WHERE id = 10`)).toEqual([{ status: 'delivered' }]);
    expect(await b.sql(`SELECT count(*) AS n FROM smpp_deliveries`)).toEqual([{ n: 0 }]);
    expect(await b.sql(`SELECT count(*) AS n FROM webhook_outbox`)).toEqual([{ n: 0 }]);
  });

  it('leases per message only its oldest waiting row, each row once while its lease lives', async () => {
    const b = await BACKENDS[name]();
    await seed(b);
    await b.store.insert([row('m1', 'm1-a'), row('m2', 'm2-a'), row('m1', 'm1-b'), row('m1', 'm1-c'), row('m9', 'other-account', 4)]);
    const now = T0_MS + 1_000;
    const first = await b.store.leaseDue([3], 'node-a', 10, now, now + 60_000);
    expect(first.map(tagOf)).toEqual(['m1-a', 'm2-a']);
    expect(await b.store.leaseDue([3], 'node-b', 10, now, now + 60_000)).toEqual([]);
    expect(await b.store.leaseDue([3], 'node-a', 10, now, now + 60_000)).toEqual([]);

    // m1-a refused: due again later, and m1-b still waits behind it.
    await b.store.retryLater(first[0]!.id, now + 2_000);
    await b.store.markDelivered([first[1]!.id], now);
    expect(await b.store.leaseDue([3], 'node-a', 10, now + 1_000, now + 61_000)).toEqual([]);
    const again = await b.store.leaseDue([3], 'node-a', 10, now + 2_000, now + 62_000);
    expect(again.map((d) => [tagOf(d), d.attempts])).toEqual([['m1-a', 1]]);
    await b.store.markDelivered([again[0]!.id], now + 2_000);
    expect((await b.store.leaseDue([3], 'node-a', 10, now + 2_000, now + 62_000)).map(tagOf)).toEqual(['m1-b']);

    // A lease that ran out (its node died mid-send) is another node's to take.
    const lapsed = await b.store.leaseDue([3], 'node-b', 10, now + 70_000, now + 130_000);
    expect(lapsed.map(tagOf)).toEqual(['m1-b']);
    await b.store.release(lapsed.map((d) => d.id));
    expect((await b.store.leaseDue([3], 'node-a', 1, now + 70_000, now + 130_000)).map((d) => [tagOf(d), d.attempts])).toEqual([['m1-b', 0]]);
    expect(await b.store.waitingBySystemId()).toEqual(new Map([['acme1', 2], ['idle', 1]]));
  });

  it('marks the acknowledged rows a lease carries delivered in its own commit, so their messages\' next rows are leased by that same lease', async () => {
    const b = await BACKENDS[name]();
    await seed(b);
    await b.store.insert([row('m1', 'm1-a'), row('m2', 'm2-a'), row('m1', 'm1-b'), row('m2', 'm2-b'), row('m3', 'm3-a')]);
    const now = T0_MS + 1_000;
    const first = await b.store.leaseDue([3], 'node-a', 10, now, now + 60_000);
    expect(first.map(tagOf)).toEqual(['m1-a', 'm2-a', 'm3-a']);
    // m1-a and m3-a acknowledged; m2-a still on its way.
    const second = await b.store.leaseDue([3], 'node-a', 10, now + 100, now + 60_100, [first[0]!.id, first[2]!.id]);
    expect(second.map(tagOf)).toEqual(['m1-b']);
    expect(await b.sql(`SELECT state, done_at FROM smpp_deliveries WHERE id IN (${first[0]!.id}, ${first[2]!.id}) ORDER BY id`))
      .toEqual([{ state: 'delivered', done_at: now + 100 }, { state: 'delivered', done_at: now + 100 }]);
    // With nothing to lease (no account, or no slot), the acknowledgements are still written.
    expect(await b.store.leaseDue([], 'node-a', 10, now + 200, now + 60_200, [first[1]!.id])).toEqual([]);
    expect(await b.sql(`SELECT state FROM smpp_deliveries WHERE id = ${first[1]!.id}`)).toEqual([{ state: 'delivered' }]);
    expect(await b.store.waitingBySystemId()).toEqual(new Map([['acme1', 2], ['idle', 0]]));
  });

  it('expires waiting rows past their expires_at (never leased after) and counts every account, 0 included', async () => {
    const b = await BACKENDS[name]();
    await seed(b);
    await b.store.insert([row('old-1', 'old-1', 3, T0_MS), row('old-2', 'old-2', 3, T0_MS), row('new', 'new', 3, T0_MS + HOUR_MS)]);
    expect(await b.store.expire(T0_MS + HOUR_MS - 1)).toBe(0);
    expect(await b.store.expire(T0_MS + HOUR_MS)).toBe(2);
    expect(await b.store.expire(T0_MS + HOUR_MS)).toBe(0);
    expect((await b.store.leaseDue([3, 4], 'node-a', 10, T0_MS + HOUR_MS, T0_MS + 2 * HOUR_MS)).map(tagOf)).toEqual(['new']);
    expect(await b.store.waitingBySystemId()).toEqual(new Map([['acme1', 1], ['idle', 0]]));
    expect(await b.store.purgeDone(T0_MS + HOUR_MS + 1)).toBe(2);
    expect(await b.sql(`SELECT message_id, state FROM smpp_deliveries`)).toEqual([{ message_id: 'new', state: 'waiting' }]);
  });
});

describe('smpp_deliveries on a PostgreSQL cluster', () => {
  it('two nodes leasing at once never get the same row, and between them get every one', async () => {
    const [a, b] = await suite.openNodes(2);
    const nodes = [pgBackend(a!.pool), pgBackend(b!.pool)];
    await seed(nodes[0]!);
    const total = 300;
    await nodes[0]!.store.insert(Array.from({ length: total }, (_, i) => row(`m-${i}`, `r-${i}`)));
    const leasedBy = new Map<number, string>();
    const duplicates: number[] = [];
    // Each node runs four lease loops at once, 7 rows at a time, until nothing is left.
    await Promise.all(nodes.flatMap((node, n) => Array.from({ length: 4 }, async () => {
      for (;;) {
        const got = await node.store.leaseDue([3], `node-${n}`, 7, T0_MS + 1_000, T0_MS + 600_000);
        if (got.length === 0) return;
        for (const d of got) {
          if (leasedBy.has(d.id)) duplicates.push(d.id);
          leasedBy.set(d.id, `node-${n}`);
        }
      }
    })));
    expect(duplicates).toEqual([]);
    expect(leasedBy.size).toBe(total);
    expect(new Set(leasedBy.values())).toEqual(new Set(['node-0', 'node-1']));
    const stamps = await nodes[0]!.sql(`SELECT leased_by, count(*)::int AS n FROM smpp_deliveries GROUP BY leased_by ORDER BY leased_by`);
    expect(stamps.reduce((sum, s) => sum + Number(s.n), 0)).toBe(total);
    for (const s of stamps) expect([...leasedBy.values()].filter((node) => node === s.leased_by)).toHaveLength(Number(s.n));
  });
});

/** One bound transceiver of account 3 on a node, acknowledging every deliver_sm. */
class NodeBSessions implements LocalSessions {
  readonly received: DeliverSmFields[] = [];
  private readonly session: DeliveringSession;

  constructor() {
    const info: ServerSessionInfo = {
      sessionId: 's-b', bindType: 'transceiver', remoteAddress: '127.0.0.1',
      account: { id: 3, systemId: 'acme1', clientId: 1, clientName: 'acme', maxBinds: null, allowIps: [] },
    };
    const received = this.received;
    this.session = {
      info, freeSlots: 10,
      deliver: (f): Promise<DeliverResult> => {
        received.push(f);
        return Promise.resolve({ kind: 'acknowledged' });
      },
    };
  }

  receiversOf(accountId: number): readonly DeliveringSession[] {
    return accountId === 3 ? [this.session] : [];
  }

  accountsWithReceivers(): readonly number[] {
    return [3];
  }

  onReceiverBound(): void {}
}

describe('a receipt across a PostgreSQL cluster', () => {
  it('produced by node A\'s engine reaches the customer bound to node B', async () => {
    const [a, b] = await suite.openNodes(2);
    const nodeA = pgBackend(a!.pool);
    await seed(nodeA);
    const sessions = new NodeBSessions();
    const senderB = new DeliverySender({
      store: new PgSmppDeliveryStore(b!.pool), sessions, nodeId: 'node-b', now: () => T0_MS + 6_000, logger: silentLogger(), retentionMs: 72 * HOUR_MS,
    });
    suite.afterThisTest(() => senderB.stop());
    senderB.start();
    // Written after node B's sender started: nothing on node A wakes it, its poll finds the row.
    await nodeA.receipt('up-1', 'UNDELIV', T0_MS + 5_000);
    const delivered = async () => (await nodeA.sql(`SELECT state FROM smpp_deliveries`))[0]?.state === 'delivered';
    await pollUntil(delivered, 10_000, () => 'the receipt to reach node B\'s customer');
    expect(sessions.received).toHaveLength(1);
    expect(sessions.received[0]).toMatchObject({ esmClass: 4, receiptedMessageId: 'c-1', messageState: 5 });
    expect(Buffer.from(sessions.received[0]!.shortMessageHex, 'hex').toString('latin1')).toMatch(/^id:c-1 sub:001 dlvrd:000 .* stat:UNDELIV err:000 text:Your code is 4821$/);
  });
});

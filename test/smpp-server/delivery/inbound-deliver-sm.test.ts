/**
 * Mobile-originated messages for SMPP customers: the one decision (SMPP when an account of the
 * client has a receiver bound anywhere or rows waiting, else the inbound webhook), the deliver_sm
 * parts (GSM 03.38 or UCS-2, long texts cut with an 8-bit concatenation UDH and esm_class 0x40),
 * and the inbound service storing them in the message's transaction on SQLite and PostgreSQL.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { silentLogger } from '../../../src/common/log.js';
import { InboundService } from '../../../src/inbound/inbound-service.js';
import { parseDeliverSm } from '../../../src/smpp-server/contracts.js';
import { inboundDeliverSms, smppAccountForInbound } from '../../../src/smpp-customer/inbound-deliver-sm.js';
import { SESSION_STALE_MS } from '../../../src/smpp-customer/session-liveness.js';
import { decodeGsm7Septets } from '../../../src/sms/gsm7.js';
import { decodeUcs2 } from '../../../src/sms/ucs2.js';
import { PgInboundStore } from '../../../src/store/postgres/inbound-store.js';
import { rows as pgRows } from '../../../src/store/postgres/pool.js';
import { asyncPort } from '../../../src/store/ports.js';
import { openStore } from '../../../src/store/sqlite/database.js';
import { InboundStore } from '../../../src/store/sqlite/inbound-store.js';
import { usePostgresSuite } from '../../support/postgres-suite.js';

const NOW_MS = 1_765_100_000_000;
const suite = usePostgresSuite();

describe('where an inbound message for a client goes', () => {
  const bound = (accountId: number, ageMs: number, waiting = 0) => ({ accountId, receiverHeartbeatAtMs: NOW_MS - ageMs, waiting });
  const away = (accountId: number, waiting: number) => ({ accountId, receiverHeartbeatAtMs: null, waiting });

  it('to the webhook for a client without an SMPP account, or whose accounts are neither bound nor waiting', () => {
    expect(smppAccountForInbound([], NOW_MS)).toBeNull();
    expect(smppAccountForInbound([away(3, 0)], NOW_MS)).toBeNull();
    // A heartbeat older than the stale bound is a node that died: not a bind.
    expect(smppAccountForInbound([bound(3, SESSION_STALE_MS)], NOW_MS)).toBeNull();
  });

  it('to the account bound anywhere in the cluster, else to the one whose rows are waiting', () => {
    expect(smppAccountForInbound([bound(3, 1_000)], NOW_MS)).toBe(3);
    expect(smppAccountForInbound([away(3, 2)], NOW_MS)).toBe(3);
    expect(smppAccountForInbound([away(3, 2), bound(5, 1_000)], NOW_MS)).toBe(5);
    expect(smppAccountForInbound([bound(7, 1_000), bound(5, 1_000)], NOW_MS)).toBe(5);
  });
});

describe('an inbound message as deliver_sm parts', () => {
  const message = (text: string) => ({ publicId: 'in-1', from: '353871234567', to: '50123', text });

  it('a short GSM text: one deliver_sm, data_coding 0, esm_class 0, unpacked septets', () => {
    const [only, ...rest] = inboundDeliverSms(message('STOP please {now}'), 9);
    expect(rest).toEqual([]);
    expect(only).toMatchObject({ sourceAddr: '353871234567', sourceAddrTon: 1, sourceAddrNpi: 1, destinationAddr: '50123', destAddrTon: 0, esmClass: 0, dataCoding: 0 });
    expect(decodeGsm7Septets(Buffer.from(only!.shortMessageHex, 'hex'))).toBe('STOP please {now}');
  });

  it('a long GSM text: 153-septet parts, each with an 8-bit concatenation UDH and esm_class 0x40', () => {
    const text = 'x'.repeat(200);
    const parts = inboundDeliverSms(message(text), 0x2a);
    expect(parts.map((p) => [p.esmClass, p.dataCoding, p.shortMessageHex.slice(0, 12)])).toEqual([[0x40, 0, '0500032a0201'], [0x40, 0, '0500032a0202']]);
    expect(parts.map((p) => decodeGsm7Septets(Buffer.from(p.shortMessageHex.slice(12), 'hex'))).join('')).toBe(text);
    expect(parts.map((p) => p.shortMessageHex.length / 2 - 6)).toEqual([153, 47]);
  });

  it('a text outside GSM 03.38: UCS-2, data_coding 8; long ones in 67-unit parts', () => {
    const [single] = inboundDeliverSms(message('Привет'), 1);
    expect(single).toMatchObject({ esmClass: 0, dataCoding: 8 });
    expect(decodeUcs2(Buffer.from(single!.shortMessageHex, 'hex'))).toBe('Привет');
    const long = 'Ж'.repeat(100);
    const parts = inboundDeliverSms(message(long), 1);
    expect(parts.map((p) => [p.esmClass, p.dataCoding, p.shortMessageHex.slice(0, 12)])).toEqual([[0x40, 8, '050003010201'], [0x40, 8, '050003010202']]);
    expect(parts.map((p) => decodeUcs2(Buffer.from(p.shortMessageHex.slice(12), 'hex'))).join('')).toBe(long);
  });
});

interface Rig {
  service: InboundService;
  sql(text: string, params?: readonly unknown[]): Promise<Record<string, unknown>[]>;
  wakes: { webhooks: number; smpp: number };
}

let dir: string;
let files = 0;
const closers: (() => Promise<void> | void)[] = [];
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'smsgate-smpp-mo-'));
});
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function rig(backend: 'sqlite' | 'postgres'): Promise<Rig> {
  const wakes = { webhooks: 0, smpp: 0 };
  const common = { logger: silentLogger(), now: () => NOW_MS, wakeWebhooks: () => void wakes.webhooks++, wakeSmppDeliveries: () => void wakes.smpp++, smppRetentionHours: 2 };
  if (backend === 'sqlite') {
    const opened = await openStore({ path: join(dir, `db-${++files}.sqlite`), synchronous: 'NORMAL' });
    closers.push(() => opened.close());
    const db = opened.db;
    return {
      wakes,
      service: new InboundService({ ...common, store: asyncPort(new InboundStore(db)) }),
      sql: async (text, params = []) => {
        const statement = db.prepare(text.replace(/\$\d+/g, '?'));
        return statement.reader ? statement.all(...params) as Record<string, unknown>[] : (statement.run(...params), []);
      },
    };
  }
  const { pool } = await suite.open();
  return { wakes, service: new InboundService({ ...common, store: new PgInboundStore(pool) }), sql: (text, params = []) => pgRows(pool, text, params) };
}

/** Client 1 with an inbound webhook, the route 50123 to it, and SMPP account 3 of it. */
async function seed(r: Rig): Promise<void> {
  await r.sql(`INSERT INTO clients (id, name, created_at, inbound_webhook_url) VALUES (1, 'acme', $1, 'https://hooks.example/in')`, [NOW_MS]);
  await r.sql(`INSERT INTO inbound_routes (client_id, address, created_at) VALUES (1, '50123', $1)`, [NOW_MS]);
  await r.sql(`INSERT INTO smpp_accounts (id, system_id, client_id, password_hash, created_at, updated_at) VALUES (3, 'acme1', 1, 'h', $1, $2)`, [NOW_MS, NOW_MS]);
}

async function bindReceiver(r: Rig, bindType: 'receiver' | 'transmitter', heartbeatAtMs: number): Promise<void> {
  await r.sql(`INSERT INTO smpp_server_sessions (id, account_id, node_id, bind_type, address, bound_at, heartbeat_at) VALUES ($1, 3, 'node-b', $2, '127.0.0.1', $3, $4)`,
    [`s-${bindType}`, bindType, heartbeatAtMs, heartbeatAtMs]);
}

const mo = (text: string) => ({ from: '353871234567', to: '50123', text, receivedAt: new Date(NOW_MS).toISOString(), raw: text });

describe.each(['sqlite', 'postgres'] as const)('the inbound service for an SMPP customer (%s)', (backend) => {
  it('queues the inbound webhook while no receiver of the client\'s account is bound and none of its rows waits', async () => {
    const r = await rig(backend);
    await seed(r);
    await bindReceiver(r, 'transmitter', NOW_MS);
    expect(await r.service.receive('carrier', mo('hello'))).toMatchObject({ kind: 'message', clientId: 1 });
    expect(await r.sql(`SELECT count(*) AS n FROM webhook_outbox WHERE kind = 'inbound'`)).toEqual([{ n: 1 }]);
    expect(await r.sql(`SELECT count(*) AS n FROM smpp_deliveries`)).toEqual([{ n: 0 }]);
    expect(r.wakes).toEqual({ webhooks: 1, smpp: 0 });
  });

  it('stores a long message for a receiver bound on another node as deliver_sm rows, in order, with the message, instead of the webhook', async () => {
    const r = await rig(backend);
    await seed(r);
    await bindReceiver(r, 'receiver', NOW_MS - 5_000);
    const text = 'y'.repeat(170);
    const outcome = await r.service.receive('carrier', mo(text));
    expect(outcome).toMatchObject({ kind: 'message', clientId: 1, smpp: true });
    expect(await r.sql(`SELECT count(*) AS n FROM webhook_outbox`)).toEqual([{ n: 0 }]);
    const stored = await r.sql(`SELECT account_id, kind, message_id, state, expires_at, deliver_sm FROM smpp_deliveries ORDER BY id`);
    expect(stored.map((s) => [s.account_id, s.kind, s.message_id, s.state, s.expires_at])).toEqual([
      [3, 'inbound', outcome.kind === 'message' ? outcome.publicId : '', 'waiting', NOW_MS + 2 * 3_600_000],
      [3, 'inbound', outcome.kind === 'message' ? outcome.publicId : '', 'waiting', NOW_MS + 2 * 3_600_000],
    ]);
    const parts = stored.map((s) => parseDeliverSm(String(s.deliver_sm)));
    expect(parts.map((p) => [p.esmClass, p.shortMessageHex.slice(6, 12)])).toEqual([[0x40, parts[0]!.shortMessageHex.slice(6, 8) + '0201'], [0x40, parts[0]!.shortMessageHex.slice(6, 8) + '0202']]);
    expect(parts.map((p) => decodeGsm7Septets(Buffer.from(p.shortMessageHex.slice(12), 'hex'))).join('')).toBe(text);
    expect(r.wakes).toEqual({ webhooks: 0, smpp: 1 });
  });

  it('keeps a message for an account that is away but has rows waiting, so it joins them', async () => {
    const r = await rig(backend);
    await seed(r);
    await bindReceiver(r, 'receiver', NOW_MS - SESSION_STALE_MS - 1);
    await r.sql(`INSERT INTO smpp_deliveries (account_id, kind, message_id, deliver_sm, state, next_attempt_at, created_at, expires_at) VALUES (3, 'receipt', 'c-1', '{}', 'waiting', $1, $2, $3)`,
      [NOW_MS, NOW_MS, NOW_MS + 1]);
    await r.service.receive('carrier', mo('are you there'));
    expect(await r.sql(`SELECT kind FROM smpp_deliveries ORDER BY id`)).toEqual([{ kind: 'receipt' }, { kind: 'inbound' }]);
    expect(await r.sql(`SELECT count(*) AS n FROM webhook_outbox`)).toEqual([{ n: 0 }]);
  });
});

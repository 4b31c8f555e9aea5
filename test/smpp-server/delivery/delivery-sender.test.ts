/**
 * The delivery sender over a real SQLite store and a LocalSessions double (the protocol layer's
 * seam): acknowledged rows are delivered, refused or lost ones sent again after the backoff, a
 * message's rows in order across a refusal, and rows that waited while no receiver was bound all
 * sent when one binds.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { silentLogger } from '../../../src/common/log.js';
import { serializeDeliverSm, type DeliverResult, type DeliverSmFields, type DeliveringSession, type LocalSessions, type ServerSessionInfo } from '../../../src/smpp-server/contracts.js';
import { DeliverySender, deliveryRetryDelayMs, type DeliveryTiming } from '../../../src/smpp-server/delivery-sender.js';
import type { CustomerDeliveryWrite } from '../../../src/store/smpp-delivery-port.js';
import { openStore, type SqliteDatabase } from '../../../src/store/sqlite/database.js';
import { SqliteSmppDeliveryStore } from '../../../src/store/sqlite/smpp-delivery-store.js';
import { pollUntil } from '../../support/poll-until.js';

const T0_MS = 1_765_100_000_000;
const HOUR_MS = 3_600_000;
const DEADLINE_MS = 10_000;

type Answer = (tag: string, session: FakeSession) => DeliverResult | Promise<DeliverResult>;

class FakeSession implements DeliveringSession {
  readonly received: string[] = [];
  outstanding = 0;
  maxOutstanding = 0;

  constructor(readonly info: ServerSessionInfo, private readonly windowSize: number, private readonly answer: Answer) {}

  get freeSlots(): number {
    return this.windowSize - this.outstanding;
  }

  async deliver(fields: DeliverSmFields): Promise<DeliverResult> {
    this.outstanding++;
    this.maxOutstanding = Math.max(this.maxOutstanding, this.outstanding);
    const tag = Buffer.from(fields.shortMessageHex, 'hex').toString();
    this.received.push(tag);
    try {
      // An answer arrives later than the request, as over a socket.
      await new Promise<void>((resolve) => setImmediate(resolve));
      return await this.answer(tag, this);
    } finally {
      this.outstanding--;
    }
  }
}

class FakeSessions implements LocalSessions {
  readonly sessions: FakeSession[] = [];
  private readonly listeners: ((session: ServerSessionInfo) => void)[] = [];

  receiversOf(accountId: number): readonly DeliveringSession[] {
    return this.sessions.filter((s) => s.info.account.id === accountId);
  }

  accountsWithReceivers(): readonly number[] {
    return [...new Set(this.sessions.map((s) => s.info.account.id))];
  }

  onReceiverBound(listener: (session: ServerSessionInfo) => void): void {
    this.listeners.push(listener);
  }

  bind(accountId: number, windowSize: number, answer: Answer): FakeSession {
    const info: ServerSessionInfo = {
      sessionId: `s-${this.sessions.length + 1}`, bindType: 'transceiver', remoteAddress: '127.0.0.1',
      account: { id: accountId, systemId: `acct${accountId}`, clientId: 1, clientName: 'acme', maxBinds: null, allowIps: [] },
    };
    const session = new FakeSession(info, windowSize, answer);
    this.sessions.push(session);
    for (const listener of this.listeners) listener(info);
    return session;
  }
}

let dir: string;
let files = 0;
const closers: (() => Promise<void> | void)[] = [];
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'smsgate-sender-'));
});
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

interface Rig {
  db: SqliteDatabase;
  store: SqliteSmppDeliveryStore;
  sessions: FakeSessions;
  sender: DeliverySender;
  clock: { nowMs: number };
}

async function rig(timing: Partial<DeliveryTiming> = {}): Promise<Rig> {
  const opened = await openStore({ path: join(dir, `db-${++files}.sqlite`), synchronous: 'NORMAL' });
  const db = opened.db;
  db.prepare(`INSERT INTO clients (id, name, created_at) VALUES (1, 'acme', ?)`).run(T0_MS);
  db.prepare(`INSERT INTO smpp_accounts (id, system_id, client_id, password_hash, created_at, updated_at) VALUES (3, 'acct3', 1, 'h', ?, ?)`).run(T0_MS, T0_MS);
  const store = new SqliteSmppDeliveryStore(db);
  const sessions = new FakeSessions();
  const clock = { nowMs: T0_MS };
  const sender = new DeliverySender({ store, sessions, nodeId: 'node-a', now: () => clock.nowMs, logger: silentLogger(), retentionMs: 72 * HOUR_MS, timing });
  closers.push(() => opened.close());
  closers.push(() => sender.stop());
  return { db, store, sessions, sender, clock };
}

function row(messageId: string, tag: string): CustomerDeliveryWrite {
  const deliverSm: DeliverSmFields = {
    sourceAddrTon: 1, sourceAddrNpi: 1, sourceAddr: '353871234567', destAddrTon: 5, destAddrNpi: 0, destinationAddr: 'ACME', esmClass: 4, dataCoding: 0,
    shortMessageHex: Buffer.from(tag).toString('hex'),
  };
  return { accountId: 3, kind: 'receipt', messageId, deliverSm: serializeDeliverSm(deliverSm), createdAtMs: T0_MS, expiresAtMs: T0_MS + HOUR_MS };
}

function states(db: SqliteDatabase): Record<string, number> {
  const counted = db.prepare(`SELECT state, count(*) AS n FROM smpp_deliveries GROUP BY state`).all() as { state: string; n: number }[];
  return Object.fromEntries(counted.map((c) => [c.state, c.n]));
}

function until(condition: () => boolean, what: string): Promise<void> {
  return pollUntil(condition, DEADLINE_MS, () => what, 5);
}

const ack: Answer = () => ({ kind: 'acknowledged' });

describe('the delivery sender', () => {
  it('backs off 1 s doubling to 60 s', () => {
    expect([1, 2, 3, 4, 5, 6, 7, 8, 20].map((a) => deliveryRetryDelayMs(a))).toEqual([1_000, 2_000, 4_000, 8_000, 16_000, 32_000, 60_000, 60_000, 60_000]);
  });

  it('sends every waiting row on the account\'s receivers, within their windows, and marks the acknowledged ones delivered', async () => {
    const { db, store, sessions, sender } = await rig();
    await store.insert(Array.from({ length: 30 }, (_, i) => row(`m-${i}`, `r-${i}`)));
    const a = sessions.bind(3, 3, ack);
    const b = sessions.bind(3, 3, ack);
    sender.start();
    await until(() => states(db).delivered === 30, '30 rows delivered');
    expect(states(db)).toEqual({ delivered: 30 });
    expect([...a.received, ...b.received].sort()).toEqual(Array.from({ length: 30 }, (_, i) => `r-${i}`).sort());
    // Spread over both binds, never past a window.
    expect(a.received.length).toBeGreaterThan(0);
    expect(b.received.length).toBeGreaterThan(0);
    expect(Math.max(a.maxOutstanding, b.maxOutstanding)).toBeLessThanOrEqual(3);
  });

  it('a refused or lost deliver_sm waits out its backoff and is sent again, keeping a message\'s order', async () => {
    const { db, store, sessions, sender, clock } = await rig();
    await store.insert([row('m1', 'm1-a'), row('m1', 'm1-b'), row('m1', 'm1-c'), row('m2', 'm2-a')]);
    const answers = new Map<string, DeliverResult[]>([
      ['m1-a', [{ kind: 'refused', status: 0x64 }]],
      ['m2-a', [{ kind: 'lost', reason: 'timeout' }]],
    ]);
    const session = sessions.bind(3, 10, (tag) => answers.get(tag)?.shift() ?? { kind: 'acknowledged' });
    sender.start();
    await until(() => session.received.length === 2 && session.outstanding === 0, 'the first two sent and answered');
    await until(() => (db.prepare(`SELECT count(*) AS n FROM smpp_deliveries WHERE attempts = 1 AND leased_by IS NULL`).get() as { n: number }).n === 2, 'both retries written');
    expect(db.prepare(`SELECT message_id, attempts, next_attempt_at FROM smpp_deliveries WHERE attempts > 0 ORDER BY id`).all())
      .toEqual([{ message_id: 'm1', attempts: 1, next_attempt_at: T0_MS + 1_000 }, { message_id: 'm2', attempts: 1, next_attempt_at: T0_MS + 1_000 }]);
    // Nothing more goes out before the backoff ends: m1-b waits behind m1-a.
    const passes = sender.counts.passes;
    sender.wake();
    await until(() => sender.counts.passes > passes, 'a pass after the wake');
    expect(states(db)).toEqual({ waiting: 4 });
    expect(session.received).toEqual(['m1-a', 'm2-a']);

    clock.nowMs = T0_MS + 1_000;
    sender.wake();
    await until(() => states(db).delivered === 4, 'all four delivered');
    expect(session.received.filter((t) => t.startsWith('m1'))).toEqual(['m1-a', 'm1-a', 'm1-b', 'm1-c']);
    expect(session.received.filter((t) => t.startsWith('m2'))).toEqual(['m2-a', 'm2-a']);
  });

  it('a session that fails the send (closed under it) counts as lost: sent again later', async () => {
    const { db, store, sessions, sender, clock } = await rig();
    await store.insert([row('m1', 'm1-a')]);
    let failed = false;
    const session = sessions.bind(3, 10, () => {
      if (failed) return { kind: 'acknowledged' };
      failed = true;
      throw new Error('socket closed');
    });
    sender.start();
    await until(() => (db.prepare(`SELECT attempts FROM smpp_deliveries`).get() as { attempts: number }).attempts === 1, 'the retry written');
    clock.nowMs += 1_000;
    sender.wake();
    await until(() => states(db).delivered === 1, 'delivered on the second attempt');
    expect(session.received).toEqual(['m1-a', 'm1-a']);
  });

  it('50 receipts that arrived while no receiver was bound all go out when one binds', async () => {
    // No polling during the test: only the bind can start the sending.
    const { db, store, sessions, sender } = await rig({ pollIntervalMs: HOUR_MS });
    sender.start();
    await store.insert(Array.from({ length: 50 }, (_, i) => row(`m-${i}`, `r-${i}`)));
    expect(states(db)).toEqual({ waiting: 50 });
    const session = sessions.bind(3, 10, ack);
    await until(() => states(db).delivered === 50, 'all 50 delivered');
    expect(session.received).toHaveLength(50);
    expect(new Set(session.received).size).toBe(50);
  });

  it('sweeps rows past their retention into expired', async () => {
    const { db, store, sender, clock } = await rig();
    await store.insert([row('m1', 'm1-a'), row('m2', 'm2-a')]);
    clock.nowMs = T0_MS + HOUR_MS;
    expect(await sender.expireNow()).toBe(2);
    expect(states(db)).toEqual({ expired: 2 });
  });
});

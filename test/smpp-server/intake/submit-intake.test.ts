/**
 * SubmitIntake end to end over a real store: a submit_sm is answered accepted only once its
 * campaign, recipient, part and reservation are committed, in a batch with the submits its turn
 * gathered; the real dispatch engine (SQLite and PostgreSQL) then claims the part and the simulator
 * transport accepts it upstream. query_sm and cancel_sm on the account's own messages; too few
 * credits, the client's send rate and a store that refuses the write, each with its status.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { CampaignProcessor } from '../../../src/campaigns/index.js';
import { silentLogger } from '../../../src/common/log.js';
import { SINGLE_GATEWAY } from '../../../src/common/node-id.js';
import { ENGINE_DEFAULTS } from '../../../src/engine/config.js';
import { DispatchEngine } from '../../../src/engine/dispatch-engine.js';
import type { EngineStore } from '../../../src/engine/engine-backend.js';
import { RouteTable } from '../../../src/engine/routing.js';
import { MESSAGE_STATE, SERVER_STATUS, type ServerSessionInfo, type SubmitOutcome, type SubmitSmFields } from '../../../src/smpp-server/contracts.js';
import { SubmitIntake, type SubmitIntakeConfig } from '../../../src/smpp-server/submit-intake.js';
import { numberingPlanFor } from '../../../src/sms/index.js';
import type { SmppIntakeStore } from '../../../src/store/smpp-intake-port.js';
import type { MessagePartRow } from '../../../src/store/entities.js';
import { openStore, type Store } from '../../../src/store/sqlite/database.js';
import { sqliteStorePorts } from '../../../src/store/store-ports.js';
import { SimulatorTransport } from '../../../src/transports/simulator/index.js';
import { enqueueDeliveryReceipt, enqueueDeliveryReceipts } from '../../../src/webhooks/index.js';
import { usePostgresSuite } from '../../support/postgres-suite.js';
import { postgresRig, sqliteRig, type IntakeRig } from './intake-backends.js';

const NUMBERING = numberingPlanFor('IE');
const pg = usePostgresSuite();
const cleanups: (() => Promise<void>)[] = [];
let dir = '';
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'smsgate-submit-intake-'));
});
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

interface Opened {
  rig: IntakeRig;
  engineStore: EngineStore;
  /** SQLite only: the open file. */
  sqlite?: Store;
}

async function openBackend(backend: 'sqlite' | 'postgres'): Promise<Opened> {
  if (backend === 'postgres') {
    const database = await pg.open();
    return { rig: postgresRig(database.pool), engineStore: { kind: 'postgres', pool: database.pool, node: SINGLE_GATEWAY } };
  }
  const store = await openStore({ path: join(dir, `intake-${Date.now()}-${Math.random()}.sqlite`), synchronous: 'FULL' });
  cleanups.push(() => store.close());
  return { rig: sqliteRig(store), engineStore: store, sqlite: store };
}

function fields(overrides: Partial<SubmitSmFields> = {}): SubmitSmFields {
  return {
    serviceType: '', sourceAddrTon: 1, sourceAddrNpi: 1, sourceAddr: '447700900001', destAddrTon: 1, destAddrNpi: 1, destinationAddr: '447700900123',
    esmClass: 0, protocolId: 0, priorityFlag: 0, scheduleDeliveryTime: '', validityPeriod: '', registeredDelivery: 1, dataCoding: 0,
    shortMessage: Buffer.from('Hello from an ESME'), ...overrides,
  };
}

async function sessionFor(rig: IntakeRig, credits?: number): Promise<ServerSessionInfo> {
  const client = await rig.seedClient(credits);
  const accountId = await rig.seedAccount(client.id);
  return {
    sessionId: `session-${accountId}`, bindType: 'transceiver', remoteAddress: '127.0.0.1',
    account: { id: accountId, systemId: `esme-${accountId}`, clientId: client.id, clientName: client.name, maxBinds: null, allowIps: [] },
  };
}

/** Routes everything to `transport`, running and up, without an engine. */
function fixedRouting(transport = 'sim'): SubmitIntakeConfig['routing'] {
  const routes = new RouteTable([{ prefix: '', transport }]);
  return () => ({ routes, conditions: new Map([[transport, { up: true as const }]]) });
}

function intakeOn(store: SmppIntakeStore, routing: SubmitIntakeConfig['routing'], wake: (transport: string) => void = () => undefined): SubmitIntake {
  return new SubmitIntake({ store, config: { routing, pricing: [], numbering: NUMBERING }, now: Date.now, logger: silentLogger(), wake });
}

async function until<T>(read: () => Promise<T>, done: (value: T) => boolean, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (Date.now() > deadline) throw new Error(`condition not met in ${timeoutMs} ms; last value ${JSON.stringify(value)}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

const accepted = (outcome: SubmitOutcome): string => {
  if (outcome.kind !== 'accepted') throw new Error(`refused with status ${outcome.status}`);
  return outcome.messageId;
};

describe.each(['sqlite', 'postgres'] as const)('submit intake into the engine (%s)', (backend) => {
  it('stores an accepted submit_sm before answering, and the engine claims its part and the simulator accepts it upstream', async () => {
    const { rig, engineStore } = await openBackend(backend);
    const sim = new SimulatorTransport({ name: 'sim', type: 'simulator', maxPerSecond: 100_000, receiptDelayMs: 5, outcomes: [] }, { recordAccepted: true });
    const engine = new DispatchEngine({
      store: engineStore, transports: [sim], routes: [{ prefix: '', transport: 'sim' }],
      // A long poll: only the intake's wake makes the lane claim soon.
      config: { ...ENGINE_DEFAULTS, pollIntervalMs: 5_000, drainTimeoutMs: 2_000 },
      logger: silentLogger(),
      deliveryReceipts: { enqueue: enqueueDeliveryReceipt, enqueueMany: enqueueDeliveryReceipts, wake: () => undefined },
    });
    cleanups.push(() => engine.stop());
    await engine.start();
    await until(async () => sim.currentState().state, (state) => state === 'bound');
    const session = await sessionFor(rig, 10);
    const woken: string[] = [];
    const intake = intakeOn(rig.store, () => engine.currentRouting(), (transport) => {
      woken.push(transport);
      engine.wakeTransport(transport);
    });

    const messageId = accepted(await intake.submit(session, fields()));
    // Durable when answered: the row is there at once.
    expect(await rig.sql('SELECT id FROM campaigns WHERE id = ?', [messageId])).toEqual([{ id: messageId }]);
    expect(woken).toEqual(['sim']);

    const parts = await until(() => rig.sql<MessagePartRow>('SELECT * FROM message_parts WHERE campaign_id = ?', [messageId]), (p) => p[0]?.state === 'delivered');
    expect(parts.map((p) => [p.transport, p.state, p.last_status, Number(p.attempts)])).toEqual([['sim', 'delivered', 'DELIVRD', 1]]);
    expect(sim.accepted.map((a) => [a.destination, a.text])).toEqual([['447700900123', 'Hello from an ESME']]);
    // Charged on acceptance upstream: the reservation became a charge.
    expect(await rig.credits(session.account.clientId)).toMatchObject({ balance: 9, reserved: 0, ledgerBalance: 9, ledgerReserved: 0 });
    const query = await intake.query(session, messageId, '447700900001');
    expect(query).toMatchObject({ kind: 'found', messageState: MESSAGE_STATE.DELIVRD, errorCode: 0 });
    expect((query as { finalDate: string }).finalDate).toMatch(/^\d{12}000\+$/);
    // Gone upstream: no longer cancellable.
    expect(await intake.cancel(session, messageId, '', '')).toEqual({ status: SERVER_STATUS.cancelFailed });
  });
});

describe('submit intake on SQLite', () => {
  it('answers no submit before the transaction storing it has committed', async () => {
    const { rig } = await openBackend('sqlite');
    const session = await sessionFor(rig, 10);
    let openGate: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => {
      openGate = resolve;
    });
    let committed = false;
    const gated: SmppIntakeStore = {
      ...rig.store,
      insertSubmits: async (batch, nowMs) => {
        await gate;
        const stored = await rig.store.insertSubmits(batch, nowMs);
        committed = true;
        return stored;
      },
    };
    const intake = intakeOn(gated, fixedRouting());
    const answered: boolean[] = [false, false, false];
    const outcomes = [0, 1, 2].map((i) => intake.submit(session, fields()).then((outcome) => {
      answered[i] = true;
      expect(committed).toBe(true);
      return outcome;
    }));
    await until(async () => intake.waiting, (waiting) => waiting === 0);
    // The batch is in the store's hands, not yet committed: nothing is answered.
    await new Promise((resolve) => setImmediate(resolve));
    expect(answered).toEqual([false, false, false]);
    openGate();
    expect((await Promise.all(outcomes)).map((o) => o.kind)).toEqual(['accepted', 'accepted', 'accepted']);
  });

  it('answers the submits of one turn from one transaction, each accepted with its own message id', async () => {
    const { rig } = await openBackend('sqlite');
    const session = await sessionFor(rig, 1_000);
    const batches: number[] = [];
    const counting: SmppIntakeStore = {
      ...rig.store,
      insertSubmits: async (batch, nowMs) => {
        batches.push(batch.length);
        return rig.store.insertSubmits(batch, nowMs);
      },
    };
    const intake = intakeOn(counting, fixedRouting());
    const outcomes = await Promise.all(Array.from({ length: 100 }, (_, i) => intake.submit(session, fields({ destinationAddr: `4477009${String(i).padStart(5, '0')}` }))));
    const ids = outcomes.map(accepted);
    expect(new Set(ids).size).toBe(100);
    expect(batches).toEqual([100]);
    const [stored] = await rig.sql<{ n: number }>('SELECT COUNT(*) AS n FROM message_parts WHERE state = ?', ['queued']);
    expect(Number(stored!.n)).toBe(100);
    expect(await rig.credits(session.account.clientId)).toMatchObject({ reserved: 100, ledgerReserved: 100 });
  });

  it('answers ESME_RSUBMITFAIL when the credits run short, accepting up to what is available', async () => {
    const { rig } = await openBackend('sqlite');
    const session = await sessionFor(rig, 3);
    const intake = intakeOn(rig.store, fixedRouting());
    const outcomes = await Promise.all(Array.from({ length: 5 }, () => intake.submit(session, fields())));
    expect(outcomes.map((o) => o.kind === 'accepted' ? 'accepted' : o.status)).toEqual(['accepted', 'accepted', 'accepted', SERVER_STATUS.submitFailed, SERVER_STATUS.submitFailed]);
    expect(await rig.credits(session.account.clientId)).toMatchObject({ balance: 3, reserved: 3 });
  });

  it('answers ESME_RTHROTTLED over the client\'s send rate', async () => {
    const { rig } = await openBackend('sqlite');
    const session = await sessionFor(rig);
    await rig.sql('INSERT INTO client_send_rates (client_id, parts_per_second, next_part_at_us, updated_at) VALUES (?, 5, 0, ?)', [session.account.clientId, Date.now()]);
    let nowMs = Date.now();
    const intake = new SubmitIntake({ store: rig.store, config: { routing: fixedRouting(), pricing: [], numbering: NUMBERING }, now: () => nowMs, logger: silentLogger(), wake: () => undefined });
    const outcomes = await Promise.all(Array.from({ length: 8 }, () => intake.submit(session, fields())));
    expect(outcomes.map((o) => o.kind === 'accepted' ? 'accepted' : o.status)).toEqual([...Array(5).fill('accepted'), ...Array(3).fill(SERVER_STATUS.throttled)]);
    nowMs += 1_000;
    expect((await intake.submit(session, fields())).kind).toBe('accepted');
  });

  it('answers ESME_RSYSERR for a batch the store refuses, with nothing of it written', async () => {
    const { rig, sqlite } = await openBackend('sqlite');
    const session = await sessionFor(rig, 10);
    sqlite!.db.exec("CREATE TRIGGER refuse_campaigns BEFORE INSERT ON campaigns BEGIN SELECT RAISE(ABORT, 'the store refuses'); END");
    const intake = intakeOn(rig.store, fixedRouting());
    const outcomes = await Promise.all(Array.from({ length: 3 }, () => intake.submit(session, fields())));
    expect(outcomes).toEqual(Array(3).fill({ kind: 'refused', status: SERVER_STATUS.systemError }));
    expect(await rig.sql('SELECT id FROM recipients')).toEqual([]);
    expect(await rig.credits(session.account.clientId)).toMatchObject({ balance: 10, reserved: 0, ledgerReserved: 0 });
    sqlite!.db.exec('DROP TRIGGER refuse_campaigns');
    expect((await intake.submit(session, fields())).kind).toBe('accepted');
  });

  it('answers query_sm and cancel_sm for the account\'s own messages only', async () => {
    const { rig } = await openBackend('sqlite');
    const session = await sessionFor(rig, 10);
    const stranger = await sessionFor(rig, 10);
    const intake = intakeOn(rig.store, fixedRouting());
    const messageId = accepted(await intake.submit(session, fields()));
    expect(await intake.query(session, messageId, '')).toEqual({ kind: 'found', messageState: MESSAGE_STATE.ENROUTE, finalDate: '', errorCode: 0 });
    expect(await intake.query(stranger, messageId, '')).toEqual({ kind: 'refused', status: SERVER_STATUS.queryFailed });
    expect(await intake.query(session, 'not-an-id', '')).toEqual({ kind: 'refused', status: SERVER_STATUS.queryFailed });
    expect(await intake.cancel(stranger, messageId, '', '')).toEqual({ status: SERVER_STATUS.cancelFailed });
    expect(await intake.cancel(session, messageId, '', '')).toEqual({ status: SERVER_STATUS.ok });
    const query = await intake.query(session, messageId, '');
    expect(query).toMatchObject({ kind: 'found', messageState: MESSAGE_STATE.DELETED, errorCode: 0 });
    expect((query as { finalDate: string }).finalDate).toMatch(/^\d{12}000\+$/);
    expect(await intake.cancel(session, messageId, '', '')).toEqual({ status: SERVER_STATUS.cancelFailed });
    expect(await rig.credits(session.account.clientId)).toMatchObject({ balance: 10, reserved: 0 });
  });
});

describe('a stored submit and the campaign processor', () => {
  it('is left alone by the campaign processor: already ready and dispatched', async () => {
    const { rig, sqlite } = await openBackend('sqlite');
    const session = await sessionFor(rig, 10);
    const intake = intakeOn(rig.store, fixedRouting());
    const messageId = accepted(await intake.submit(session, fields()));
    const before = await rig.sql('SELECT * FROM campaigns WHERE id = ?', [messageId]);
    const processor = new CampaignProcessor({ store: sqliteStorePorts({ db: sqlite!.db }), logger: silentLogger() });
    expect(await processor.processOnce()).toBe(0);
    expect(await rig.sql('SELECT * FROM campaigns WHERE id = ?', [messageId])).toEqual(before);
    expect(await rig.sql('SELECT COUNT(*) AS n FROM recipients')).toEqual([{ n: 1 }]);
  });
});

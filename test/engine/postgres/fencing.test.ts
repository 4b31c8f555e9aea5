/**
 * PostgreSQL only (a backend with nodes): an engine's writes that end a claim are fenced on the
 * node id the claim was stamped with. A node that was fenced and rejoined can hold the same part
 * twice: a stale copy claimed under its former id (in flight when a live node took that id over
 * and requeued the part) and the copy it claimed again under its new id. The stale copy's outcome
 * is refused and counted, and leaves the new claim alone; the new copy's outcome is recorded. A
 * clean stop requeues only this node's parts, never another node's.
 */
import { afterEach, expect, it } from 'vitest';
import { requeueExpiredNodes } from '../../../src/store/postgres/node-takeover.js';
import { inTransaction } from '../../../src/store/postgres/pool.js';
import { PgDispatchStore } from '../../../src/store/postgres/dispatch-store.js';
import { SmppTransport } from '../../../src/transports/smpp/index.js';
import { usePostgresSuite } from '../../support/postgres-suite.js';
import { TestSmsc } from '../../support/smsc/test-smsc.js';
import { smppConfig } from '../../transports/smpp/helpers.js';
import { ScriptedTransport } from '../scripted-transport.js';
import { msisdns, postgresEngineRig, until } from '../conformance/engine-backends.js';

const suite = usePostgresSuite();
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

it('refuses and counts the outcomes of stale copies claimed under the former id, and records the copies claimed again under the new id', async () => {
  const { pool } = await suite.open();
  let id = 'node-a';
  // Frozen past its lease: the lane claims nothing while leaseHeld() is false. A read of it once
  // frozen comes from a claim pass that starts after any earlier pass (and its claim) ended: no
  // send reads it meanwhile, every submit already went out (TransportLane.feedPass, send).
  let frozen = false;
  let readsWhileFrozen = 0;
  const leaseHeld = (): boolean => {
    if (frozen) readsWhileFrozen++;
    return !frozen;
  };
  const rig = postgresEngineRig(pool, suite.afterThisTest, { nodeId: () => id, leaseHeld });
  // Room for the stale copies and the fresh ones in flight at once.
  const transport = new ScriptedTransport('carrier', { windowSize: 8 });
  const engine = await rig.startEngine({ transports: [transport] });
  const campaign = await rig.seedCampaign({ clientId: await rig.seedClient(), msisdns: msisdns(3) });
  await until(async () => transport.held.length, (n) => n === 3);
  expect((await rig.parts(campaign)).map((p) => [p.state, p.claimed_by])).toEqual(Array(3).fill(['submitting', 'node-a']));

  // Frozen past its lease: a live node took node-a over (its parts requeued); the node wakes,
  // rejoins as node-b and claims the same parts again while the stale copies are still in flight.
  // The takeover waits until the lane has seen the lease lapse: a claim read as node-a but run
  // after the requeue would take the parts under node-a again, and those copies are held back at
  // the send (LEASE_LAPSED, counted 'held'), which is another scenario than this one.
  frozen = true;
  await until(async () => readsWhileFrozen, (n) => n > 0);
  await inTransaction(pool, (client) => requeueExpiredNodes(client, ['node-a']));
  id = 'node-b';
  frozen = false;
  engine.wake();
  await until(async () => transport.held.length, (n) => n === 6);
  expect((await rig.parts(campaign)).map((p) => [p.state, p.claimed_by])).toEqual(Array(3).fill(['submitting', 'node-b']));

  // The stale copies: one held back (not sent, the lease had lapsed), one whose response timed out,
  // one whose late response came in.
  const stale = transport.held.splice(0, 3);
  stale[0]!.answer([{ part: 1, kind: 'not-sent', reason: 'LEASE_LAPSED' }]);
  stale[1]!.answer([{ part: 1, kind: 'temporary', status: 'RESPONSE_TIMEOUT' }]);
  stale[2]!.answer([{ part: 1, kind: 'accepted', messageId: 'stale-3' }]);
  await until(async () => engine.stats().fencedWrites, (n) => n === 3);
  // node-b's claims stand: still 'submitting' under node-b, no attempt spent, no message id.
  expect((await rig.parts(campaign)).map((p) => [p.state, p.claimed_by, p.attempts, p.message_id])).toEqual(Array(3).fill(['submitting', 'node-b', 0, null]));
  expect(engine.stats().outcomes).toEqual({ accepted: 0, retried: 0, held: 0, failed: 0 });

  // node-b's submits are recorded: nothing is left queued to be sent again.
  const fresh = transport.held.splice(0, 3);
  const byDestination = new Map(fresh.map((h, i) => [h.message.destination, `fresh-${i + 1}`]));
  fresh.forEach((h, i) => h.answer([{ part: 1, kind: 'accepted', messageId: `fresh-${i + 1}` }]));
  const parts = await until(() => rig.parts(campaign), (ps) => ps.every((p) => p.state === 'submitted'));
  const recipients = await rig.recipients(campaign);
  expect(parts.map((p) => [p.state, p.claimed_by, p.attempts, p.message_id])).toEqual(
    recipients.map((r) => ['submitted', null, 1, byDestination.get(r.msisdn)]));
  expect(engine.stats().fencedWrites).toBe(3);
  expect(engine.stats().outcomes.accepted).toBe(3);
});

it('requeues at stop only the parts this node still holds, never another node\'s', async () => {
  const { pool } = await suite.open();
  // Submits never answered: the engine's parts stay 'submitting' until it stops.
  const smsc = await TestSmsc.start({ onSubmit: () => ({ kind: 'never' }) });
  cleanups.push(() => smsc.stop());
  const rig = postgresEngineRig(pool, suite.afterThisTest, { nodeId: () => 'node-a' });
  const engine = await rig.startEngine({ transports: [new SmppTransport(smppConfig(smsc, { responseTimeoutMs: 60_000 }))], engine: { drainTimeoutMs: 0 } });
  const mine = await rig.seedCampaign({ clientId: await rig.seedClient(), msisdns: msisdns(3) });
  await until(() => rig.parts(mine), (parts) => parts.length === 3 && parts.every((p) => p.state === 'submitting' && p.claimed_by === 'node-a'));
  // A live peer's claim on a part of its own (the campaign not ready: this engine does not
  // materialise it). The part falls due only a minute from now, when the peer claims it: this
  // engine's lane, which claims every due part on its transport, would otherwise race the peer.
  const theirs = await rig.seedCampaign({ clientId: await rig.seedClient(), msisdns: msisdns(1, '35385'), ready: false });
  const [recipient] = await rig.recipients(theirs);
  const nowMs = Date.now();
  const dueMs = nowMs + 60_000;
  await rig.stores.dispatch.insertPart({
    recipientId: recipient!.id, campaignId: theirs, partNumber: 1, partsTotal: 1, concatReference: 1, transport: 'carrier', state: 'queued',
    lastStatus: null, nextAttemptAt: dueMs, finalAt: null,
  }, nowMs);
  await rig.stores.dispatch.markRecipientDispatched(recipient!.id, nowMs);
  expect(await new PgDispatchStore(pool).claimParts('carrier', theirs, dueMs, 10, 'node-b')).toHaveLength(1);

  await engine.stop();
  expect((await rig.parts(mine)).map((p) => [p.state, p.claimed_by, p.attempts])).toEqual(Array(3).fill(['queued', null, 0]));
  expect((await rig.parts(theirs)).map((p) => [p.state, p.claimed_by])).toEqual([['submitting', 'node-b']]);
});

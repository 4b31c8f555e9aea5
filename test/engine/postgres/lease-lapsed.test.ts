/**
 * PostgreSQL only (a backend with nodes): a cluster node that may have lost its lease sends nothing (a node SIGSTOPped
 * past its lease wakes with messages it claimed before the freeze still queued; its peers have sent
 * those parts meanwhile). NodeIdSource.leaseHeld false: the lane claims nothing and a claimed
 * message still waiting for its turn is not submitted but queued again, without spending an attempt;
 * nor is one it claimed under the id it had before it was fenced and rejoined.
 */
import { afterEach, expect, it } from 'vitest';
import type { NodeIdSource } from '../../../src/common/node-id.js';
import type { DispatchEngine } from '../../../src/engine/dispatch-engine.js';
import type { PgPool } from '../../../src/store/postgres/pool.js';
import { requeueExpiredNodes } from '../../../src/store/postgres/node-takeover.js';
import { SmppTransport } from '../../../src/transports/smpp/index.js';
import { usePostgresSuite } from '../../support/postgres-suite.js';
import { TestSmsc } from '../../support/smsc/test-smsc.js';
import { smppConfig } from '../../transports/smpp/helpers.js';
import { allFinal, msisdns, postgresEngineRig, until, type EngineRig } from '../conformance/engine-backends.js';

const suite = usePostgresSuite();
let started: TestSmsc | undefined;

afterEach(async () => {
  await started?.stop();
  started = undefined;
});

/**
 * An engine on a fresh database for `node`, with a campaign of three recipients and an SMSC that
 * never answers the first submit: the window of 1 is taken, the other two messages wait in the
 * lane's queue. Resolves once that first submit has arrived.
 */
async function startWithFirstSubmitUnanswered(node: NodeIdSource): Promise<{ pool: PgPool; rig: EngineRig; engine: DispatchEngine; campaign: string; smsc: TestSmsc }> {
  const { pool } = await suite.open();
  const rig = postgresEngineRig(pool, suite.afterThisTest, node);
  let submits = 0;
  const smsc = await TestSmsc.start({ autoReceipt: { stat: 'DELIVRD' }, onSubmit: () => (++submits === 1 ? { kind: 'never' } : { kind: 'ok' }) });
  started = smsc;
  const transport = new SmppTransport(smppConfig(smsc, { window: 1, responseTimeoutMs: 1_000 }));
  const engine = await rig.startEngine({ transports: [transport] });
  const campaign = await rig.seedCampaign({ clientId: await rig.seedClient(), msisdns: msisdns(3) });
  await until(() => Promise.resolve(smsc.submits.length), (n) => n === 1);
  return { pool, rig, engine, campaign, smsc };
}

/** How many times each destination was submitted, in ascending order. */
function submitsPerDestination(smsc: TestSmsc): number[] {
  const perDestination = new Map<string, number>();
  for (const submit of smsc.submits) perDestination.set(submit.wire.destination_addr, (perDestination.get(submit.wire.destination_addr) ?? 0) + 1);
  return [...perDestination.values()].sort();
}

it('submits nothing while the lease may have lapsed: a queued message goes back unsent, and is sent once the lease is confirmed again', async () => {
  let held = true;
  const { rig, engine, campaign, smsc } = await startWithFirstSubmitUnanswered({ nodeId: () => 'node-a', leaseHeld: () => held });

  // The node freezes past its lease: when the first submit times out, the waiting messages find it lapsed.
  held = false;
  const heldBack = await until(() => rig.parts(campaign), (parts) => parts.filter((p) => p.last_status === 'LEASE_LAPSED' && p.state === 'queued').length === 2);
  expect(smsc.submits).toHaveLength(1);
  expect(heldBack.filter((p) => p.last_status === 'LEASE_LAPSED').map((p) => [p.attempts, p.claimed_by])).toEqual([[0, null], [0, null]]);
  // Nor is anything claimed meanwhile, though all three parts are queued and due.
  const timedOut = await until(() => rig.parts(campaign), (parts) => parts.every((p) => p.state === 'queued'));
  expect(timedOut.map((p) => p.claimed_by)).toEqual([null, null, null]);
  expect(smsc.submits).toHaveLength(1);

  // A beat gets through: everything is sent, each held-back message once.
  held = true;
  engine.wake();
  const recipients = await until(() => rig.recipients(campaign), allFinal);
  expect(recipients.map((r) => r.status)).toEqual(['delivered', 'delivered', 'delivered']);
  // The unanswered first one is sent again (it may have reached the carrier: at-least-once); the held-back ones once.
  expect(submitsPerDestination(smsc)).toEqual([1, 1, 2]);
});

it('submits nothing it claimed under the id it had before it was fenced and rejoined, even with its new lease held', async () => {
  let id = 'node-a';
  const { rig, engine, campaign, smsc } = await startWithFirstSubmitUnanswered({ nodeId: () => id, leaseHeld: () => true });

  // Fenced and rejoined while its first submit is unanswered: the three claims are node-a's, void now.
  id = 'node-b';
  // Their outcomes are written under the claim's id (node-a), not the new one: no reaper has taken
  // node-a over, so the two waiting messages go back to the queue unsent (no attempt spent) and the
  // timed-out submit is retried; nothing is refused. This node, as node-b, then sends them.
  const recipients = await until(() => rig.recipients(campaign), allFinal);
  expect(recipients.map((r) => r.status)).toEqual(['delivered', 'delivered', 'delivered']);
  expect(engine.stats().fencedWrites).toBe(0);
  expect((await rig.parts(campaign)).map((p) => p.attempts).sort()).toEqual([1, 1, 2]);
  // The unanswered first one is sent again (it may have reached the carrier: at-least-once); the held-back ones once.
  expect(submitsPerDestination(smsc)).toEqual([1, 1, 2]);
});

it('refuses what it claimed under its former id once a peer took that id over', async () => {
  let id = 'node-a';
  let held = true;
  const { pool, rig, engine, campaign, smsc } = await startWithFirstSubmitUnanswered({ nodeId: () => id, leaseHeld: () => held });

  // Frozen past its lease: a live node takes node-a over (its parts requeued) before it wakes as node-b.
  held = false;
  const client = await pool.connect();
  try {
    await requeueExpiredNodes(client, ['node-a']);
  } finally {
    client.release();
  }
  id = 'node-b';
  held = true;
  engine.wake();
  // node-a's writes are refused (the first submit's timeout and the two held-back messages): they
  // never end node-b's claims of the same parts, so each is recorded once it is sent under node-b.
  const recipients = await until(() => rig.recipients(campaign), allFinal);
  expect(recipients.map((r) => r.status)).toEqual(['delivered', 'delivered', 'delivered']);
  expect(engine.stats().fencedWrites).toBe(3);
  expect(submitsPerDestination(smsc)).toEqual([1, 1, 2]);
});

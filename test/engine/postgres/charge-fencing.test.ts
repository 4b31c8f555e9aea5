/**
 * PostgreSQL only (a backend with nodes): a part's charge is written in the transaction of the
 * outcome that moves it to 'submitted', and that write is fenced on the claim's node id. A part a
 * fenced node sent and a live claim sent again is accepted twice at the carrier (the documented
 * duplicate window) but charged once: the stale copy's acceptance, before or after the live one,
 * writes neither the transition nor a ledger row.
 */
import { expect, it } from 'vitest';
import { requeueExpiredNodes } from '../../../src/store/postgres/node-takeover.js';
import { inTransaction } from '../../../src/store/postgres/pool.js';
import { usePostgresSuite } from '../../support/postgres-suite.js';
import { ScriptedTransport } from '../scripted-transport.js';
import { msisdns, postgresEngineRig, until } from '../conformance/engine-backends.js';

const suite = usePostgresSuite();

it('charges a part re-claimed under a new node id once, however its stale copy is answered', async () => {
  const { pool } = await suite.open();
  let id = 'node-a';
  const rig = postgresEngineRig(pool, suite.afterThisTest, { nodeId: () => id, leaseHeld: () => true });
  const transport = new ScriptedTransport('carrier', { windowSize: 8 });
  const engine = await rig.startEngine({ transports: [transport] });
  const clientId = await rig.seedClient();
  await rig.applyCredits([{ clientId, kind: 'top-up', credits: 100, campaignId: null, note: null }]);
  // 2 recipients x 1 part x 4 credits: 8 reserved.
  const campaign = await rig.seedCampaign({ clientId, msisdns: msisdns(2), creditsPerPart: 4 });
  await until(async () => transport.held.length, (n) => n === 2);

  // node-a frozen past its lease and taken over; it rejoins as node-b and claims both parts again.
  await inTransaction(pool, (client) => requeueExpiredNodes(client, ['node-a']));
  id = 'node-b';
  engine.wake();
  await until(async () => transport.held.length, (n) => n === 4);
  const [staleEarly, staleLate, ...fresh] = transport.held.splice(0, 4);

  // A stale acceptance before the live one, then the live ones, then a stale acceptance after.
  staleEarly!.answer([{ part: 1, kind: 'accepted', messageId: 'stale-1' }]);
  await until(async () => engine.stats().fencedWrites, (n) => n === 1);
  fresh.forEach((h, i) => h.answer([{ part: 1, kind: 'accepted', messageId: `fresh-${i + 1}` }]));
  await until(() => rig.parts(campaign), (ps) => ps.every((p) => p.state === 'submitted'));
  staleLate!.answer([{ part: 1, kind: 'accepted', messageId: 'stale-2' }]);
  await until(async () => engine.stats().fencedWrites, (n) => n === 2);

  expect((await rig.parts(campaign)).map((p) => p.message_id).sort()).toEqual(['fresh-1', 'fresh-2']);
  const rows = await rig.sql<{ kind: string; credits: number }>('SELECT kind, credits FROM credit_ledger WHERE campaign_id = ? ORDER BY id', [campaign]);
  const sum = (kind: string): number => rows.filter((r) => r.kind === kind).reduce((n, r) => n + Number(r.credits), 0);
  expect([sum('reserve'), sum('release'), sum('charge')]).toEqual([8, -8, -8]);
  const [account] = await rig.sql<{ balance: number; reserved: number }>('SELECT balance, reserved FROM client_credits WHERE client_id = ?', [clientId]);
  expect([Number(account!.balance), Number(account!.reserved)]).toEqual([92, 0]);
});

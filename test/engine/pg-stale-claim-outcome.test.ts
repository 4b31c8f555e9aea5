/**
 * A cluster node that was fenced and rejoined can hold the same part twice: a stale copy it claimed
 * under its former id (queued in its lane when it froze; the takeover requeued the part) and the
 * copy it claimed again under its new id. Outcomes are fenced on the id the parts were claimed
 * under, not on the node's id at the write: the stale copy's outcome is refused and leaves the new
 * claim alone, so the new copy's submit is recorded and the part is not sent a second time.
 */
import { expect, it } from 'vitest';
import { ENGINE_DEFAULTS } from '../../src/engine/config.js';
import { PgOutcomeWriter } from '../../src/engine/postgres/outcome-writer.js';
import { PgUnitRunner } from '../../src/engine/postgres/unit-runner.js';
import { silentLogger } from '../../src/common/log.js';
import { PgDispatchStore } from '../../src/store/postgres/dispatch-store.js';
import { requeueExpiredNodes } from '../../src/store/postgres/node-takeover.js';
import type { PgPool } from '../../src/store/postgres/pool.js';
import { usePostgresSuite } from '../support/postgres-suite.js';
import { msisdns, partsOf, recipientsOf, seedCampaign, seedClient } from './pg-engine-harness.js';

const suite = usePostgresSuite();
const TRANSPORT = 'carrier';

async function takeOver(pool: PgPool, nodeId: string): Promise<void> {
  const client = await pool.connect();
  try {
    await requeueExpiredNodes(client, [nodeId]);
  } finally {
    client.release();
  }
}

it('refuses the outcome of a stale copy claimed under the former id, and records the copy claimed again under the new id', async () => {
  const { pool } = await suite.open();
  // 'queued': no engine runs here; the parts are inserted and claimed by hand.
  const campaign = await seedCampaign(pool, { clientId: await seedClient(pool), msisdns: msisdns(3), state: 'queued' });
  const store = new PgDispatchStore(pool);
  const nowMs = Date.now();
  await store.insertParts((await recipientsOf(pool, campaign)).map((r) => ({
    recipientId: r.id, campaignId: campaign, partNumber: 1, partsTotal: 1, concatReference: 0, transport: TRANSPORT, state: 'queued' as const,
    lastStatus: null, nextAttemptAt: nowMs, finalAt: null,
  })), nowMs);

  // Claimed as node-a, which froze past its lease; a live node took node-a over; the woken node,
  // rejoined as node-b, claimed the same parts again while the stale copies still waited in its lane.
  const stale = await store.claimParts(TRANSPORT, campaign, nowMs, 10, 'node-a');
  expect(stale).toHaveLength(3);
  await takeOver(pool, 'node-a');
  const fresh = await store.claimParts(TRANSPORT, campaign, nowMs, 10, 'node-b');
  expect(fresh.map((p) => p.id)).toEqual(stale.map((p) => p.id));

  const units = new PgUnitRunner(pool, silentLogger());
  const writer = new PgOutcomeWriter(units, { ...ENGINE_DEFAULTS }, silentLogger(), Date.now, () => undefined);
  // The stale copies: two held back (not sent, the lease had lapsed), one whose late response came in.
  const [first, second, third] = stale;
  await writer.write({ transport: TRANSPORT, parts: [first!], outcomes: [{ part: 1, kind: 'not-sent', reason: 'LEASE_LAPSED' }], claimedBy: 'node-a' });
  await writer.write({ transport: TRANSPORT, parts: [second!], outcomes: [{ part: 1, kind: 'temporary', status: 'RESPONSE_TIMEOUT' }], claimedBy: 'node-a' });
  await writer.write({ transport: TRANSPORT, parts: [third!], outcomes: [{ part: 1, kind: 'accepted', messageId: 'stale-3' }], claimedBy: 'node-a' });
  expect(writer.fencedWrites).toBe(3);
  // node-b's claims stand: still 'submitting' under node-b, no attempt spent, no message id.
  expect((await partsOf(pool, campaign)).map((p) => [p.state, p.claimed_by, p.attempts, p.message_id])).toEqual(Array(3).fill(['submitting', 'node-b', 0, null]));

  // node-b's submits (one message per recipient) are recorded: nothing is left queued to be sent again.
  await Promise.all(fresh.map((part, i) => writer.write({
    transport: TRANSPORT, parts: [part], outcomes: [{ part: part.part_number, kind: 'accepted', messageId: `fresh-${i + 1}` }], claimedBy: 'node-b',
  })));
  expect(writer.fencedWrites).toBe(3);
  expect((await partsOf(pool, campaign)).map((p) => [p.state, p.claimed_by, p.attempts, p.message_id])).toEqual([
    ['submitted', null, 1, 'fresh-1'], ['submitted', null, 1, 'fresh-2'], ['submitted', null, 1, 'fresh-3'],
  ]);
  units.close();
});

/**
 * The intake's store on SQLite and PostgreSQL: a batch of submits is one transaction writing, per
 * submit, the campaign (ready, dispatched, its SMPP account and cut), its one recipient, its parts
 * queued on the routed transport and its reservation through the ledger writer, in order, so a
 * short submit in the middle writes nothing and the later ones still reserve what is left; the
 * ledger's sums equal client_credits'; query reads only the account's own message; cancel ends a
 * message no part of which went upstream and releases what it reserved; on PostgreSQL two nodes
 * submitting at once against one client never reserve past its credits.
 */
import { randomUUID } from 'node:crypto';
import { expect, it } from 'vitest';
import type { CampaignRow, MessagePartRow, RecipientRow } from '../../../src/store/entities.js';
import type { IntakeSubmit } from '../../../src/store/smpp-intake-port.js';
import { describeIntakeBackends, postgresRig, type IntakeRig } from './intake-backends.js';

const NOW_MS = 1_780_000_000_000;
const CUT_JSON = JSON.stringify({ dataCoding: 0, concat: null, registeredDelivery: 1, sourceAddrTon: 5, sourceAddrNpi: 0 });

function submit(clientId: number, accountId: number, overrides: Partial<IntakeSubmit> = {}): IntakeSubmit {
  return {
    messageId: randomUUID(), clientId, accountId, name: 'SMPP esme', sender: 'Acme', text: 'Hello', textSent: 'Hello', encoding: 'GSM-7',
    partsPerMessage: 1, smppSubmitJson: CUT_JSON, msisdn: '353871234567', creditsPerPart: 1, concatReference: 0x1234, transport: 'carrier',
    dueAtMs: NOW_MS, ...overrides,
  };
}

async function campaign(rig: IntakeRig, id: string): Promise<CampaignRow | undefined> {
  return (await rig.sql<CampaignRow>('SELECT * FROM campaigns WHERE id = ?', [id]))[0];
}

async function expectLedgerMatches(rig: IntakeRig, clientId: number): Promise<void> {
  const sums = await rig.credits(clientId);
  expect(sums.reserved).toBe(sums.ledgerReserved);
  expect(sums.balance).toBe(sums.ledgerBalance);
}

describeIntakeBackends('smpp intake store', (open, backend, pg) => {
  it('commits a batch as campaign, recipient, queued parts and reserve ledger rows, the ledger\'s sums matching client_credits', async () => {
    const rig = await open();
    const client = await rig.seedClient(100);
    const accountId = await rig.seedAccount(client.id);
    const batch = [
      submit(client.id, accountId, { creditsPerPart: 2 }),
      // A message_payload the engine cuts: no reference of the customer's; its parts get the recipient's, as any campaign's.
      submit(client.id, accountId, { creditsPerPart: 3, partsPerMessage: 2, text: 'W'.repeat(200), textSent: 'W'.repeat(200), msisdn: '447700900123', concatReference: null }),
      submit(client.id, accountId, { creditsPerPart: 2, dueAtMs: NOW_MS + 60_000 }),
    ];
    expect(await rig.store.insertSubmits(batch, NOW_MS)).toEqual([{ kind: 'stored' }, { kind: 'stored' }, { kind: 'stored' }]);

    const first = await campaign(rig, batch[0]!.messageId);
    expect(first).toMatchObject({
      client_id: client.id, user_id: null, state: 'ready', sender: 'Acme', text: 'Hello', text_sent: 'Hello', encoding: 'GSM-7', parts_per_message: 1,
      total_sent: 1, skipped_count: 0, credits_reserved: 2, smpp_account_id: accountId, smpp_submit: CUT_JSON, processing_by: null, request_recipients: null,
    });
    expect(Number(first!.dispatched_at)).toBe(NOW_MS);
    expect(Number(first!.ready_at)).toBe(NOW_MS);
    const second = batch[1]!.messageId;
    expect(Number((await campaign(rig, second))!.credits_reserved)).toBe(6);
    const recipients = await rig.sql<RecipientRow>('SELECT * FROM recipients WHERE campaign_id = ?', [second]);
    expect(recipients.map((r) => [r.msisdn, r.dispatch_state, r.status, Number(r.credits_per_part)])).toEqual([['447700900123', 'dispatched', 'pending', 3]]);
    const parts = await rig.sql<MessagePartRow>('SELECT * FROM message_parts WHERE campaign_id = ? ORDER BY part_number', [second]);
    expect(parts.map((p) => [Number(p.recipient_id), Number(p.part_number), Number(p.parts_total), Number(p.concat_reference), p.transport, p.state,
      Number(p.next_attempt_at), Number(p.credits)])).toEqual([
      [Number(recipients[0]!.id), 1, 2, Number(recipients[0]!.id) & 0xffff, 'carrier', 'queued', NOW_MS, 3],
      [Number(recipients[0]!.id), 2, 2, Number(recipients[0]!.id) & 0xffff, 'carrier', 'queued', NOW_MS, 3],
    ]);
    const later = await rig.sql<MessagePartRow>('SELECT * FROM message_parts WHERE campaign_id = ?', [batch[2]!.messageId]);
    expect(later.map((p) => Number(p.next_attempt_at))).toEqual([NOW_MS + 60_000]);

    const ledger = await rig.sql<{ kind: string; credits: number; campaign_id: string }>(
      "SELECT kind, credits, campaign_id FROM credit_ledger WHERE client_id = ? AND kind = 'reserve' ORDER BY id", [client.id]);
    expect(ledger.map((l) => [l.kind, Number(l.credits), l.campaign_id])).toEqual(batch.map((s, i) => ['reserve', [2, 6, 2][i], s.messageId]));
    expect(await rig.credits(client.id)).toMatchObject({ balance: 100, reserved: 10 });
    await expectLedgerMatches(rig, client.id);
    // Ready and dispatched: the campaign processor (queued/processing) and materialise (not dispatched) pass it over.
    expect(await rig.sql("SELECT id FROM campaigns WHERE state IN ('queued', 'processing') OR (state = 'ready' AND dispatched_at IS NULL)")).toEqual([]);
  });

  it('decides reservations in the batch\'s order: a short submit writes nothing and the later ones reserve what is left', async () => {
    const rig = await open();
    const client = await rig.seedClient(5);
    const accountId = await rig.seedAccount(client.id);
    const batch = [submit(client.id, accountId, { creditsPerPart: 3 }), submit(client.id, accountId, { creditsPerPart: 3 }), submit(client.id, accountId, { creditsPerPart: 2 })];
    expect(await rig.store.insertSubmits(batch, NOW_MS)).toEqual([{ kind: 'stored' }, { kind: 'short', needed: 3, available: 2 }, { kind: 'stored' }]);
    expect(await campaign(rig, batch[1]!.messageId)).toBeUndefined();
    expect(await rig.sql('SELECT id FROM recipients WHERE campaign_id = ?', [batch[1]!.messageId])).toEqual([]);
    expect(await rig.sql('SELECT id FROM message_parts WHERE campaign_id = ?', [batch[1]!.messageId])).toEqual([]);
    expect(await rig.credits(client.id)).toMatchObject({ balance: 5, reserved: 5 });
    await expectLedgerMatches(rig, client.id);
  });

  it('stores an unlimited client\'s submit with nothing reserved and its parts never charged', async () => {
    const rig = await open();
    const client = await rig.seedClient();
    const accountId = await rig.seedAccount(client.id);
    const one = submit(client.id, accountId, { creditsPerPart: 4 });
    expect(await rig.store.insertSubmits([one], NOW_MS)).toEqual([{ kind: 'stored' }]);
    expect((await campaign(rig, one.messageId))!.credits_reserved).toBeNull();
    expect((await rig.sql<MessagePartRow>('SELECT credits FROM message_parts WHERE campaign_id = ?', [one.messageId])).map((p) => Number(p.credits))).toEqual([0]);
    expect(await rig.sql('SELECT id FROM credit_ledger WHERE client_id = ?', [client.id])).toEqual([]);
  });

  it('writes nothing of a batch the store refuses part-way', async () => {
    const rig = await open();
    const client = await rig.seedClient(50);
    const accountId = await rig.seedAccount(client.id);
    // The ledger row is the batch's last write: campaigns, recipients and parts are in the transaction when it fails.
    if (rig.backend === 'sqlite') {
      await rig.sql("CREATE TRIGGER refuse_ledger BEFORE INSERT ON credit_ledger BEGIN SELECT RAISE(ABORT, 'the store refuses'); END");
    } else {
      await rig.sql("CREATE FUNCTION refuse_ledger() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'the store refuses'; END $$");
      await rig.sql('CREATE TRIGGER refuse_ledger BEFORE INSERT ON credit_ledger FOR EACH ROW EXECUTE FUNCTION refuse_ledger()');
    }
    const batch = [submit(client.id, accountId), submit(client.id, accountId, { partsPerMessage: 2 })];
    await expect(rig.store.insertSubmits(batch, NOW_MS)).rejects.toThrow(/the store refuses/);
    for (const one of batch) {
      expect(await campaign(rig, one.messageId)).toBeUndefined();
      expect(await rig.sql('SELECT id FROM recipients WHERE campaign_id = ?', [one.messageId])).toEqual([]);
      expect(await rig.sql('SELECT id FROM message_parts WHERE campaign_id = ?', [one.messageId])).toEqual([]);
    }
    expect(await rig.credits(client.id)).toMatchObject({ balance: 50, reserved: 0 });
    await rig.sql(rig.backend === 'sqlite' ? 'DROP TRIGGER refuse_ledger' : 'DROP TRIGGER refuse_ledger ON credit_ledger');
    expect(await rig.store.insertSubmits(batch, NOW_MS)).toEqual([{ kind: 'stored' }, { kind: 'stored' }]);
    expect(await rig.credits(client.id)).toMatchObject({ balance: 50, reserved: 3 });
    await expectLedgerMatches(rig, client.id);
  });

  it('answers query only for the account\'s own message, with its parts and recipient', async () => {
    const rig = await open();
    const client = await rig.seedClient(10);
    const mine = await rig.seedAccount(client.id);
    const other = await rig.seedAccount((await rig.seedClient(10)).id);
    const one = submit(client.id, mine, { partsPerMessage: 2 });
    await rig.store.insertSubmits([one], NOW_MS);
    const state = await rig.store.messageState(mine, one.messageId);
    expect(state).toMatchObject({ clientId: client.id, recipientStatus: 'pending', recipientLastStatus: null });
    expect(state!.parts.map((p) => [p.state, p.finalAt, Number(p.credits)])).toEqual([['queued', null, 1], ['queued', null, 1]]);
    expect(Number(state!.creditsReserved)).toBe(2);
    expect(await rig.store.messageState(other, one.messageId)).toBeUndefined();
    expect(await rig.store.messageState(mine, randomUUID())).toBeUndefined();
  });

  it('cancels a message whose parts are all queued: parts and recipient end DELETED, its reservation released, in one transaction', async () => {
    const rig = await open();
    const client = await rig.seedClient(10);
    const accountId = await rig.seedAccount(client.id);
    const other = await rig.seedAccount(client.id);
    const one = submit(client.id, accountId, { partsPerMessage: 2, creditsPerPart: 2 });
    const sent = submit(client.id, accountId);
    await rig.store.insertSubmits([one, sent], NOW_MS);
    expect(await rig.credits(client.id)).toMatchObject({ reserved: 5 });

    expect(await rig.store.cancel(other, one.messageId, NOW_MS + 1)).toBe('unknown');
    expect(await rig.store.cancel(accountId, one.messageId, NOW_MS + 1)).toBe('cancelled');
    const parts = await rig.sql<MessagePartRow>('SELECT state, last_status, final_at FROM message_parts WHERE campaign_id = ? ORDER BY part_number', [one.messageId]);
    expect(parts.map((p) => [p.state, p.last_status, Number(p.final_at)])).toEqual([['undelivered', 'DELETED', NOW_MS + 1], ['undelivered', 'DELETED', NOW_MS + 1]]);
    const [recipient] = await rig.sql<RecipientRow>('SELECT status, last_status FROM recipients WHERE campaign_id = ?', [one.messageId]);
    expect([recipient!.status, recipient!.last_status]).toEqual(['undelivered', 'DELETED']);
    expect(await rig.credits(client.id)).toMatchObject({ balance: 10, reserved: 1 });
    const releases = await rig.sql<{ credits: number }>("SELECT credits FROM credit_ledger WHERE campaign_id = ? AND kind = 'release'", [one.messageId]);
    expect(releases.map((r) => Number(r.credits))).toEqual([-4]);
    await expectLedgerMatches(rig, client.id);
    // Cancelled once: a second cancel finds it final.
    expect(await rig.store.cancel(accountId, one.messageId, NOW_MS + 2)).toBe('refused');

    // A part a lane claimed may already be at the carrier: not cancellable.
    await rig.sql("UPDATE message_parts SET state = 'submitting' WHERE campaign_id = ?", [sent.messageId]);
    expect(await rig.store.cancel(accountId, sent.messageId, NOW_MS + 3)).toBe('refused');
    expect((await rig.sql<MessagePartRow>('SELECT state FROM message_parts WHERE campaign_id = ?', [sent.messageId])).map((p) => p.state)).toEqual(['submitting']);
    expect(await rig.credits(client.id)).toMatchObject({ reserved: 1 });
  });

  if (backend === 'postgres') {
    it('refuses to cancel a message whose part a claim on another connection holds, once that claim commits it submitting', async () => {
      const database = await pg.open();
      const rig = postgresRig(database.pool);
      const client = await rig.seedClient(10);
      const accountId = await rig.seedAccount(client.id);
      const one = submit(client.id, accountId);
      await rig.store.insertSubmits([one], NOW_MS);
      // A lane's claim: the part locked and marked submitting, not yet committed.
      const claim = await database.pool.connect();
      try {
        await claim.query('BEGIN');
        await claim.query("UPDATE message_parts SET state = 'submitting' WHERE campaign_id = $1", [one.messageId]);
        const cancelling = rig.store.cancel(accountId, one.messageId, NOW_MS + 1);
        // The cancel waits on the claim's row lock (a session of this database waiting on a Lock).
        const deadline = Date.now() + 10_000;
        for (;;) {
          const { rows } = await claim.query<{ n: number }>(
            "SELECT COUNT(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'");
          if ((rows[0]?.n ?? 0) > 0) break;
          if (Date.now() > deadline) throw new Error('the cancel never waited on the claim');
          await new Promise((resolve) => setTimeout(resolve, 10));
        }
        await claim.query('COMMIT');
        expect(await cancelling).toBe('refused');
      } finally {
        claim.release();
      }
      expect(await rig.credits(client.id)).toMatchObject({ reserved: 1 });
    });


    it('reserves at most the client\'s credits when two nodes store sixty submits against twenty at once, never below zero', async () => {
      const nodes = await pg.openNodes(2);
      const rigs = nodes.map((node) => postgresRig(node.pool));
      const client = await rigs[0]!.seedClient(20);
      const accountId = await rigs[0]!.seedAccount(client.id);
      // Thirty batches of two, alternating nodes, all in flight together.
      const batches = Array.from({ length: 30 }, () => [submit(client.id, accountId), submit(client.id, accountId)]);
      const results = (await Promise.all(batches.map((batch, i) => rigs[i % 2]!.store.insertSubmits(batch, NOW_MS)))).flat();
      expect(results.filter((r) => r.kind === 'stored')).toHaveLength(20);
      expect(results.filter((r) => r.kind === 'short')).toHaveLength(40);
      for (const short of results) if (short.kind === 'short') expect(short).toEqual({ kind: 'short', needed: 1, available: 0 });
      const rig = rigs[0]!;
      expect(await rig.credits(client.id)).toMatchObject({ balance: 20, reserved: 20 });
      await expectLedgerMatches(rig, client.id);
      const [stored] = await rig.sql<{ n: number }>('SELECT COUNT(*) AS n FROM campaigns WHERE smpp_account_id = ?', [accountId]);
      expect(Number(stored!.n)).toBe(20);
      const [parts] = await rig.sql<{ n: number }>('SELECT COUNT(*) AS n FROM message_parts p JOIN campaigns c ON c.id = p.campaign_id WHERE c.smpp_account_id = ?', [accountId]);
      expect(Number(parts!.n)).toBe(20);
    });
  }
});

/**
 * Facts for the planner tests, as a backend would read them, and a model of the database that
 * applies a plan to them: so a batch planned at once can be compared with the same changes
 * planned one by one, each seeing the previous one's writes.
 */
import type { PartChangeFacts, PartChangesPlan } from '../../../src/engine/steps/part-changes.js';
import type { PartRow, RecipientRow } from '../../../src/store/part-change-rows.js';

export const NOW_MS = 1_800_000_000_000;

export function part(id: number, recipientId: number, fields: Partial<PartRow> = {}): PartRow {
  return {
    id, recipient_id: recipientId, part_number: 1, parts_total: 1, state: 'submitted', last_status: null, final_at: null, claimed_by: null, credits: 0, campaign_id: 'c',
    client_id: 7, ...fields,
  };
}

export function recipient(id: number, fields: Partial<RecipientRow> = {}): RecipientRow {
  return {
    id, status: 'pending', last_status: null, msisdn: `35387000000${id}`, client_reference: `ref-${id}`, client_id: 7, sender: 'ACME',
    webhook_url: 'https://client.example/hook', ...fields,
  };
}

/** What the database holds after the plan's part and recipient writes (with the statements' guards). */
export function applyPlan(facts: PartChangeFacts, plan: PartChangesPlan, nowMs: number): PartChangeFacts {
  const parts = facts.parts.map((p) => {
    const w = plan.partReceipts.find((x) => x.partId === p.id);
    if (w === undefined || p.state === 'delivered' || p.state === 'undelivered') return p;
    return w.kind === 'note' ? { ...p, last_status: w.status } : { ...p, state: w.state, last_status: w.status, final_at: nowMs };
  });
  const recipients = facts.recipients.map((r) => {
    const w = plan.recipients.find((x) => x.recipientId === r.id);
    return w === undefined ? r : { ...r, status: w.status, last_status: w.lastStatus };
  });
  return { parts, recipients };
}

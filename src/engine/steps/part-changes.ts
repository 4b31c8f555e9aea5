/**
 * Part changes -> recipient changes -> Delivery Receipt webhook rows, decided once for both
 * backends (SPEC "Campaign Summary", "Delivery Receipt"). Every step that changes parts (submit
 * outcomes, receipts, the unmatched-receipt sweep, a recipient no route matches) applies its
 * changes to a PartChangeLedger: a working copy of the parts and recipients the backend read, so
 * a batch that touches one part or recipient twice (two receipts for one message, a failure and a
 * receipt for another part of the same recipient) gives what applying them one by one gives. The
 * ledger's plan is what the backend writes in the same transaction as its reads.
 *
 * Rules (recipient-status.ts): a final part state is never overwritten, so duplicates and late
 * receipts change nothing; a recipient's status is recomputed from ALL its parts; a status change
 * queues one Delivery Receipt when the client has a webhook URL (none otherwise: setting a URL
 * later does not replay old statuses), stored with the status or not at all.
 *
 * SMPP customers (docs/behaviour/smpp-server.md): a recipient of a campaign an SMPP account
 * submitted gets no webhook; when its status becomes final and the submit's registered_delivery
 * asks for it (wantsReceipt), the plan carries its receipt as a deliver_sm to store (smpp_deliveries),
 * written in the same commit as the status that caused it, waiting until the customer takes it or
 * receiptRetentionHours pass.
 *
 * Credits (docs/behaviour/credits.md "Charges and releases"): a priced part is charged when the
 * carrier accepts it and released when it ends without being accepted (creditsOfPartChange). The
 * movements are part of the plan, so they commit with the change that causes them or not at all,
 * and a part's acceptance is written once (the claim fence): a part sent again after a crash is
 * charged once.
 */
import { chargeOf, releaseOf, type CreditMovement } from '../../accounts/credits.js';
import { isDeliveredStatus } from '../../receipts/index.js';
import { parseCustomerCut, receiptRetentionMs, wantsReceipt } from '../../smpp-customer/customer-cut.js';
import { serializeDeliverSm } from '../../smpp-customer/deliver-sm.js';
import { receiptDeliverSm, receiptOutcomeOf } from '../../smpp-customer/receipt-deliver-sm.js';
import type { CustomerDeliveryWrite } from '../../store/smpp-delivery-port.js';
import type { PartState, RecipientStatus } from '../../store/entities.js';
import type { PartRow, RecipientRow } from '../../store/part-change-rows.js';
import type { DeliveryReceiptEvent } from '../../webhooks/delivery-receipt.js';
import type { StoreMode, StoreResult } from '../store-mode.js';
import { nextRecipientStatus, type StatusTrigger } from '../recipient-status.js';
import type { LogLine } from './log-lines.js';

/**
 * What a part-changing step read: the parts it may change, and for each of their recipients the
 * recipient row and ALL its parts (a multi-part recipient's status depends on every part).
 * A recipient missing here no longer exists (its change is logged and skipped).
 */
export interface PartChangeFacts {
  parts: readonly PartRow[];
  recipients: readonly RecipientRow[];
}

/** A receipt's status as applied to a part. */
export interface ReceiptStatus {
  status: string;
  final: boolean;
  errorCode: string | null;
}

/**
 * What receipts do to a part, at most one per part per plan (the last one wins: a 'note' followed
 * by a 'finish' is the finish; nothing follows a finish). Written only while the part is not final.
 */
export type PartReceiptWrite =
  | { kind: 'note'; partId: number; status: string }
  | { kind: 'finish'; partId: number; state: 'delivered' | 'undelivered'; status: string; errorCode: string | null };

/** A recipient's new status, at most one per recipient per plan (its last). */
export interface RecipientWrite {
  recipientId: number;
  status: RecipientStatus;
  lastStatus: string | null;
}

export interface PartChangesPlan {
  partReceipts: PartReceiptWrite[];
  recipients: RecipientWrite[];
  /** One Delivery Receipt per recipient status change, in the order they happened. */
  outbox: DeliveryReceiptEvent[];
  /** The parts' charges and releases (creditsOfPartChange), unmerged: the ledger writers merge them. */
  credits: CreditMovement[];
  /**
   * Receipts for SMPP customers, in the order they happened (present only when there is one): the
   * writer inserts them as smpp_deliveries rows in the same commit.
   */
  customerDeliveries?: CustomerDeliveryWrite[];
  /** Logged once the plan committed. */
  logs: LogLine[];
}

/** A part state the caller writes itself (a claim ending: submitted, requeued, failed). */
export type PartPatch = Partial<Pick<PartRow, 'state' | 'last_status' | 'final_at' | 'claimed_by'>>;

/** What the ledger needs besides the facts. */
export interface PartChangeOptions {
  /** How long a customer's receipt waits for it to bind (EngineConfig.receiptRetentionHours). */
  receiptRetentionHours?: number;
}

export class PartChangeLedger {
  private readonly parts = new Map<number, PartRow>();
  private readonly partsByRecipient = new Map<number, PartRow[]>();
  private readonly recipients = new Map<number, RecipientRow>();
  private readonly partReceipts = new Map<number, PartReceiptWrite>();
  private readonly recipientWrites = new Map<number, RecipientWrite>();
  private readonly outbox: DeliveryReceiptEvent[] = [];
  private readonly credits: CreditMovement[] = [];
  private readonly logs: LogLine[] = [];
  private readonly customerDeliveries: CustomerDeliveryWrite[] = [];
  /** The carrier's `err:` of the last final receipt per recipient (a customer's receipt repeats it). */
  private readonly carrierErrors = new Map<number, string | null>();
  private readonly receiptRetentionMs: number;

  constructor(facts: PartChangeFacts, private readonly nowMs: number, options: PartChangeOptions = {}) {
    this.receiptRetentionMs = receiptRetentionMs(options.receiptRetentionHours);
    for (const read of facts.parts) {
      if (this.parts.has(read.id)) continue;
      const part = { ...read };
      this.parts.set(part.id, part);
      const siblings = this.partsByRecipient.get(part.recipient_id);
      if (siblings === undefined) this.partsByRecipient.set(part.recipient_id, [part]);
      else siblings.push(part);
    }
    for (const recipient of facts.recipients) this.recipients.set(recipient.id, { ...recipient });
  }

  /** The part as the changes so far left it; undefined when it was not read. */
  part(partId: number): Readonly<PartRow> | undefined {
    return this.parts.get(partId);
  }

  /** Records a change the caller writes itself (a claim ending), so later changes in the batch see it. */
  patchPart(partId: number, patch: PartPatch): void {
    const part = this.parts.get(partId);
    if (part === undefined) return;
    if (patch.state !== undefined) this.credits.push(...creditsOfPartChange(part, patch.state));
    Object.assign(part, patch);
  }

  /**
   * A receipt's status on its part: a final status moves it to delivered (status begins with
   * DELIV) or undelivered, a non-final one only notes the status; a part already final is left
   * alone. Then its recipient's status is recomputed. Returns false when the part did not change.
   */
  applyReceipt(partId: number, receipt: ReceiptStatus): boolean {
    const part = this.parts.get(partId);
    if (part === undefined || isFinal(part)) return false;
    part.last_status = receipt.status;
    if (receipt.final) {
      const state = isDeliveredStatus(receipt.status) ? 'delivered' : 'undelivered';
      this.credits.push(...creditsOfPartChange(part, state));
      part.state = state;
      part.final_at = this.nowMs;
      this.carrierErrors.set(part.recipient_id, receipt.errorCode);
      this.partReceipts.set(partId, { kind: 'finish', partId, state, status: receipt.status, errorCode: receipt.errorCode });
    } else {
      const earlier = this.partReceipts.get(partId);
      // Not final before this receipt, so an earlier write for this part in the batch was a note too.
      if (earlier === undefined || earlier.kind === 'note') this.partReceipts.set(partId, { kind: 'note', partId, status: receipt.status });
    }
    this.afterPartChange(part.recipient_id, { status: receipt.status, final: receipt.final });
    return true;
  }

  /**
   * One of the recipient's parts changed: its status from all its parts (nextRecipientStatus)
   * and, when it changed, its Delivery Receipt if the client has a webhook URL.
   */
  afterPartChange(recipientId: number, trigger: StatusTrigger): void {
    const recipient = this.recipients.get(recipientId);
    if (recipient === undefined) {
      this.logs.push({ level: 'warn', fields: { recipientId }, message: 'part changed for a recipient that no longer exists' });
      return;
    }
    const parts = (this.partsByRecipient.get(recipientId) ?? [])
      .map((p) => ({ partNumber: p.part_number, state: p.state, lastStatus: p.last_status, finalAt: p.final_at }))
      .sort((a, b) => a.partNumber - b.partNumber);
    const next = nextRecipientStatus({ status: recipient.status, lastStatus: recipient.last_status }, parts, trigger);
    if (next === undefined) return;
    recipient.status = next.status;
    recipient.last_status = next.lastStatus;
    this.recipientWrites.set(recipientId, { recipientId, status: next.status, lastStatus: next.lastStatus });
    if (recipient.smpp_account_id !== null && recipient.smpp_account_id !== undefined) {
      // An SMPP customer is answered over SMPP, never with its client's HTTP webhook.
      const receipt = customerReceiptOf(recipient, recipient.smpp_account_id, this.carrierErrors.get(recipientId) ?? null, this.nowMs, this.receiptRetentionMs);
      if (receipt.kind === 'deliver') this.customerDeliveries.push(receipt.write);
      else if (receipt.kind === 'unreadable') this.logs.push({ level: 'warn', fields: { recipientId, campaignId: recipient.campaign_id }, message: 'SMPP submit stored without a readable customer cut: no receipt for the customer' });
      return;
    }
    if (recipient.webhook_url === null || recipient.webhook_url === '' || next.lastStatus === null) return;
    this.outbox.push({
      clientId: recipient.client_id, recipientId, to: recipient.msisdn, from: recipient.sender, status: next.lastStatus, clientReference: recipient.client_reference,
    });
  }

  plan(): PartChangesPlan {
    return {
      partReceipts: [...this.partReceipts.values()], recipients: [...this.recipientWrites.values()], outbox: [...this.outbox], credits: [...this.credits],
      logs: [...this.logs], ...(this.customerDeliveries.length > 0 ? { customerDeliveries: [...this.customerDeliveries] } : {}),
    };
  }
}

type CustomerReceipt = { kind: 'deliver'; write: CustomerDeliveryWrite } | { kind: 'none' } | { kind: 'unreadable' };

/**
 * A recipient of an SMPP submit, its status just changed: its receipt when the status is final
 * and registered_delivery asks for one (SMPP 3.4 §5.2.17: 1 every final outcome, 2 failures only,
 * 0 none; intermediate notifications are not offered).
 */
function customerReceiptOf(recipient: RecipientRow, accountId: number, carrierErr: string | null, nowMs: number, retentionMs: number): CustomerReceipt {
  if (recipient.status === 'pending' || recipient.last_status === null) return { kind: 'none' };
  const parsed = recipient.smpp_submit === null || recipient.smpp_submit === undefined ? undefined : parseCustomerCut(recipient.smpp_submit);
  if (parsed === undefined || !parsed.ok || recipient.campaign_id === undefined) return { kind: 'unreadable' };
  const { cut } = parsed;
  if (!wantsReceipt(cut.registeredDelivery, recipient.status === 'delivered')) return { kind: 'none' };
  const deliverSm = receiptDeliverSm({
    messageId: recipient.campaign_id, recipientMsisdn: recipient.msisdn, customerSourceAddr: recipient.sender, cut,
    outcome: receiptOutcomeOf(recipient.status === 'delivered', recipient.last_status, carrierErr), submittedAtMs: recipient.campaign_created_at ?? nowMs, doneAtMs: nowMs,
    text: recipient.smpp_text ?? '',
  });
  return { kind: 'deliver', write: { accountId, kind: 'receipt', messageId: recipient.campaign_id, deliverSm: serializeDeliverSm(deliverSm), createdAtMs: nowMs, expiresAtMs: nowMs + retentionMs } };
}

function isFinal(part: PartRow): boolean {
  return part.state === 'delivered' || part.state === 'undelivered';
}

/**
 * What a part moving from its state to `next` does to its client's credits. Only a part the
 * carrier has not accepted yet ('queued', 'submitting') moves any: accepted ('submitted', or a
 * receipt saying it was delivered) it is charged, its reservation consumed (chargeOf); ended
 * without being accepted ('undelivered': rejected, retries spent) its reservation is released.
 * A part already accepted stays charged whatever its receipt says; an unpriced part (credits 0,
 * its client unlimited) moves nothing. Called once per state change the plan writes, on the
 * part as the batch's earlier changes left it, so a batch touching a part twice moves it once.
 */
export function creditsOfPartChange(part: Pick<PartRow, 'state' | 'credits' | 'client_id' | 'campaign_id'>, next: PartState): CreditMovement[] {
  if (part.state !== 'queued' && part.state !== 'submitting') return [];
  switch (next) {
    case 'submitted':
    case 'delivered':
      return chargeOf(part.client_id, part.campaign_id, part.credits);
    case 'undelivered':
      return releaseOf(part.client_id, part.campaign_id, part.credits);
    case 'queued':
    case 'submitting':
      return [];
  }
}

/** A change the caller already wrote to one of a recipient's parts (e.g. its parts inserted final with NO_ROUTE). */
export interface WrittenPartChange {
  recipientId: number;
  trigger: StatusTrigger;
}

/** The recipients' new statuses and webhooks after parts the caller wrote changed (read after those writes). */
export function planRecipientChanges(facts: PartChangeFacts, changes: readonly WrittenPartChange[], nowMs: number, options: PartChangeOptions = {}): PartChangesPlan {
  const ledger = new PartChangeLedger(facts, nowMs, options);
  for (const change of changes) ledger.afterPartChange(change.recipientId, change.trigger);
  return ledger.plan();
}

/** True when the plan writes nothing. */
export function isEmptyPlan(plan: PartChangesPlan): boolean {
  return plan.partReceipts.length === 0 && plan.recipients.length === 0 && plan.outbox.length === 0 && plan.credits.length === 0
    && (plan.customerDeliveries ?? []).length === 0;
}

/**
 * The store side of a part change, for a step whose own writes came first (the materialiser's
 * NO_ROUTE parts). Both methods run inside the caller's transaction.
 */
export interface PartChangesStore<M extends StoreMode> {
  /**
   * The recipients with ALL their parts. PostgreSQL locks the recipient rows FOR UPDATE (in id
   * order) before reading their parts, so two transactions changing parts of one recipient compute
   * its status one after the other, the second seeing the first's parts.
   */
  readRecipientFacts(recipientIds: readonly number[]): StoreResult<M, PartChangeFacts>;
  /**
   * Writes the plan: receipt states onto parts (never over a final state), recipient statuses,
   * the outbox rows, the customers' deliver_sm rows (smpp_deliveries) and the credit movements (the ledger writer: merged per client, campaign and
   * kind), one statement per kind on PostgreSQL.
   */
  writePartChanges(plan: PartChangesPlan, nowMs: number): StoreResult<M, void>;
}

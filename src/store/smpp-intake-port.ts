/**
 * The store side of the SMPP server's submit intake (submit_sm, query_sm, cancel_sm): one
 * interface, a SQLite (src/store/sqlite/smpp-intake-store.ts) and a PostgreSQL
 * (src/store/postgres/smpp-intake-store.ts) implementation.
 *
 * A submit_sm is stored as a campaign of one recipient (its id is the message id the customer
 * gets), 'ready' and already dispatched (the campaign processor and materialise never pick it),
 * with its part(s) queued on the routed transport and its credit reservation, in one transaction.
 * The rows each submit writes, and whether a message may still be cancelled, are decided here once
 * (acceptedRows, planCancel) for both backends.
 *
 * Contract of every method: one atomic unit of work; a throw means nothing of it was written.
 */
import type { CreditMovement, OrderedReservation } from '../accounts/credits.js';
import { releaseOf, reserveInOrder } from '../accounts/credits.js';
import { concatReferenceFor } from '../sms/udh.js';
import type { NewPart } from './dispatch-steps.js';
import type { PartState, RecipientStatus } from './entities.js';

/** What the intake reads before deciding one submit: the facts of its client about the destination and sender. */
export interface IntakeFactsQuery {
  clientId: number;
  /** The sender as the sender rules keep it (trimmed). */
  sender: string;
  /** The destination, normalised. */
  msisdn: string;
}

export interface IntakeFacts {
  /** The destination is on the client's opt-out (suppression) list. */
  optedOut: boolean;
  /** The sender's type in the client's sender list (senders.type), undefined when not listed. */
  senderType: number | undefined;
  /** client_send_rates.parts_per_second, null when the client has no send rate. */
  partsPerSecond: number | null;
}

/** One submit the intake accepted, everything its rows need but what the reservation decides. */
export interface IntakeSubmit {
  /** The campaign id: the message id given in submit_sm_resp. */
  messageId: string;
  clientId: number;
  accountId: number;
  /** The campaign's name (the operator's list shows it). */
  name: string;
  sender: string;
  /** The decoded text (campaigns.text) and what is sent of it (campaigns.text_sent). */
  text: string;
  textSent: string;
  encoding: string;
  partsPerMessage: number;
  /** campaigns.smpp_submit: the CustomerCut as JSON. */
  smppSubmitJson: string;
  msisdn: string;
  /** The price of one part to the destination. */
  creditsPerPart: number;
  /**
   * The parts' concatenation reference (message_parts.concat_reference): the customer's own for a
   * part it cut; null for a message the engine cuts, which gets the reference every campaign's
   * message gets (concatReferenceFor its recipient id) once the recipient is inserted.
   */
  concatReference: number | null;
  /** The routed transport the parts are queued on. */
  transport: string;
  /** When its parts are due: now, or when the route's window opens. */
  dueAtMs: number;
}

export type IntakeStored =
  | { kind: 'stored' }
  /** Too few credits available: nothing of this submit was written. */
  | { kind: 'short'; needed: number; available: number };

/** The campaign row of an accepted submit: the submit's own columns, under the campaign's id, with its reservation. */
export type IntakeCampaignRow = Pick<
  IntakeSubmit,
  'clientId' | 'accountId' | 'name' | 'sender' | 'text' | 'textSent' | 'encoding' | 'partsPerMessage' | 'smppSubmitJson'
> & {
  id: string;
  createdAtMs: number;
  creditsReserved: number | null;
};

/** An accepted submit's rows, but for its recipient's id (the parts name it once it is inserted). */
export interface IntakeRows {
  campaign: IntakeCampaignRow;
  recipient: { campaignId: string; msisdn: string; creditsPerPart: number };
  parts: (Omit<NewPart, 'recipientId' | 'concatReference'> & { concatReference: number | null })[];
}

/** An accepted submit's parts once its recipient has an id: the engine's reference where the customer gave none. */
export function partsOfRecipient(rows: IntakeRows, recipientId: number): NewPart[] {
  return rows.parts.map((part) => ({ ...part, recipientId, concatReference: part.concatReference ?? concatReferenceFor(recipientId) }));
}

/**
 * The rows one submit writes once its reservation is decided (reserveInOrder), or that it is
 * short (nothing of it is written). A client that was unlimited when the message was stored is never charged, as an
 * HTTP campaign accepted so (src/campaigns/campaign-processor.ts): its parts cost 0.
 */
export function acceptedRows(
  submit: IntakeSubmit, decided: OrderedReservation, nowMs: number,
): { kind: 'short'; needed: number; available: number } | { kind: 'rows'; rows: IntakeRows } {
  const { reservation } = decided;
  if (reservation.outcome === 'short') return { kind: 'short', needed: reservation.needed, available: reservation.available };
  const perPart = decided.creditsReserved === null ? 0 : submit.creditsPerPart;
  return { kind: 'rows', rows: {
    campaign: {
      id: submit.messageId, clientId: submit.clientId, name: submit.name, sender: submit.sender, text: submit.text, textSent: submit.textSent,
      encoding: submit.encoding, partsPerMessage: submit.partsPerMessage, createdAtMs: nowMs, creditsReserved: decided.creditsReserved,
      accountId: submit.accountId, smppSubmitJson: submit.smppSubmitJson,
    },
    recipient: { campaignId: submit.messageId, msisdn: submit.msisdn, creditsPerPart: perPart },
    parts: Array.from({ length: submit.partsPerMessage }, (_, i) => ({
      campaignId: submit.messageId,
      partNumber: i + 1,
      partsTotal: submit.partsPerMessage,
      concatReference: submit.concatReference,
      transport: submit.transport,
      state: 'queued' as const,
      lastStatus: null,
      nextAttemptAt: submit.dueAtMs,
      finalAt: null,
      credits: perPart,
    })),
  } };
}

/** What one batch writes: each submit's outcome in order, the accepted ones' rows, their credit movements. */
export interface IntakeBatchPlan {
  results: IntakeStored[];
  accepted: IntakeRows[];
  movements: CreditMovement[];
}

/**
 * A batch's reservations decided in arrival order against its clients' accounts as read (locked)
 * in the batch's transaction, and the rows of the submits that fit: both stores write exactly this.
 */
export function planIntakeBatch(
  batch: readonly IntakeSubmit[], accounts: Parameters<typeof reserveInOrder>[0], nowMs: number,
): IntakeBatchPlan {
  const decided = reserveInOrder(accounts, batch.map((s) => ({ clientId: s.clientId, campaignId: s.messageId, credits: s.creditsPerPart * s.partsPerMessage })));
  const plan: IntakeBatchPlan = { results: [], accepted: [], movements: [] };
  batch.forEach((submit, i) => {
    const ordered = decided[i]!;
    const decision = acceptedRows(submit, ordered, nowMs);
    if (decision.kind === 'short') {
      plan.results.push(decision);
      return;
    }
    plan.accepted.push(decision.rows);
    plan.movements.push(...ordered.movements);
    plan.results.push({ kind: 'stored' });
  });
  return plan;
}

/** A stored submit's parts and recipient as query_sm and cancel_sm read them. */
export interface IntakeMessage {
  clientId: number;
  creditsReserved: number | null;
  recipientId: number;
  recipientStatus: RecipientStatus;
  recipientLastStatus: string | null;
  parts: { id: number; state: PartState; lastStatus: string | null; lastErrorCode: string | null; finalAt: number | null; credits: number }[];
}

/** The status a cancelled message's parts and recipient end with (SMPP 3.4 §5.2.28 message_state DELETED). */
export const CANCELLED_STATUS = 'DELETED';

export type CancelPlan =
  | { kind: 'cancel'; partIds: number[]; recipientId: number; credits: CreditMovement[] }
  | { kind: 'refuse' };

/**
 * cancel_sm (SMPP 3.4 §4.9): only while no part went upstream, i.e. every part still 'queued'
 * (a part 'submitting' may already be at the carrier). Its parts and recipient end undelivered as
 * DELETED, and what the message reserved is released (none of it will be charged).
 */
export function planCancel(message: IntakeMessage, messageId: string): CancelPlan {
  if (message.parts.length === 0 || message.parts.some((p) => p.state !== 'queued') || message.recipientStatus !== 'pending') return { kind: 'refuse' };
  return {
    kind: 'cancel',
    partIds: message.parts.map((p) => p.id),
    recipientId: message.recipientId,
    credits: message.creditsReserved === null ? [] : releaseOf(message.clientId, messageId, message.creditsReserved),
  };
}

export interface SmppIntakeStore {
  /** The facts planning one submit needs (three primary-key or index reads). */
  readFacts(query: IntakeFactsQuery): Promise<IntakeFacts>;
  /**
   * Stores a batch in one transaction: each client's credits read (PostgreSQL: locked FOR UPDATE,
   * in client id order) once, the reservations decided in the batch's order (reserveInOrder),
   * then every submit that is not short as its campaign, recipient, parts and reserve ledger row.
   * One result per submit, in order. Throws (nothing written) when the store fails.
   */
  insertSubmits(batch: readonly IntakeSubmit[], nowMs: number): Promise<IntakeStored[]>;
  /** The message if it is one the account submitted, else undefined. */
  messageState(accountId: number, messageId: string): Promise<IntakeMessage | undefined>;
  /**
   * Cancels the account's message if planCancel allows, in one transaction: 'cancelled', or
   * 'refused' (went upstream, already final), or 'unknown' (not the account's message).
   */
  cancel(accountId: number, messageId: string, nowMs: number): Promise<'cancelled' | 'refused' | 'unknown'>;
}

/**
 * The rows the engine's part-changing steps (submit outcomes, receipts, the unmatched-receipt
 * sweep) read, the same on both backends: what the SQLite and PostgreSQL queries return and the
 * planners in src/engine/steps/ decide on.
 */
import type { PartState, RecipientStatus } from './entities.js';

/** A part with what deciding its change needs: its state, claim stamp and the status fields a recipient's status is computed from. */
export interface PartRow {
  id: number;
  recipient_id: number;
  part_number: number;
  parts_total: number;
  state: PartState;
  last_status: string | null;
  final_at: number | null;
  /** The node id of the claim (PostgreSQL cluster); null for a single gateway, and once the claim ended. */
  claimed_by: string | null;
  /** What the part costs, fixed when its campaign was processed (0: unpriced, nothing charged or released). */
  credits: number;
  campaign_id: string;
  /** Its campaign's client: whose credits the part's charge or release moves. */
  client_id: number;
}

/** A recipient with what its Delivery Receipt needs (SPEC "Delivery Receipt"). */
export interface RecipientRow {
  id: number;
  status: RecipientStatus;
  last_status: string | null;
  msisdn: string;
  client_reference: string | null;
  client_id: number;
  sender: string;
  webhook_url: string | null;
  /**
   * The SMPP server account whose submit_sm the campaign is (its receipt goes back as a deliver_sm,
   * not the client's webhook); null or absent for a campaign from the HTTP API.
   */
  smpp_account_id?: number | null;
  /** That submit's CustomerCut JSON (src/smpp-server/contracts.ts); null from the HTTP API. */
  smpp_submit?: string | null;
  /** The campaign id: the message id the SMPP customer got. */
  campaign_id?: string;
  /** When the campaign was accepted: the receipt's `submit date`. */
  campaign_created_at?: number;
  /** The campaign's text, read only for an SMPP campaign (the receipt's `text:`); null otherwise. */
  smpp_text?: string | null;
}

/**
 * A receipt that matched no part when it arrived (stored match_state 'pending': the migration's
 * value; the engine calls it unmatched).
 */
export interface UnmatchedReceiptRow {
  id: number;
  transport: string;
  message_id: string;
  status: string;
  /** 1 for a final status. */
  final: number;
  error_code: string | null;
}

/** The stored match_state of an unmatched receipt (initial schema's CHECK constraint). */
export const UNMATCHED_MATCH_STATE = 'pending';

/** Which part a (transport, message id) names now: the newest part with that id. */
export interface MessageIdTarget {
  transport: string;
  message_id: string;
  part_id: number;
}

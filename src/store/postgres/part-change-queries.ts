/**
 * The statements of the engine's part-changing steps (submit outcomes, receipts, the
 * unmatched-receipt sweep) on PostgreSQL, each for a whole batch: reads that take the locks the
 * step needs, and writes as one statement per kind (UPDATE ... FROM unnest(...), multi-row
 * INSERT), never one per row. Every function runs on the caller's connection, inside its
 * transaction; the locks are held to its end.
 */
import type { PartState, RecipientStatus } from '../entities.js';
import type { MessageIdTarget, PartRow, RecipientRow, UnmatchedReceiptRow } from '../part-change-rows.js';
import type { ExpiredReceipt, ReceiptInsert } from '../sqlite/dispatch-store.js';
import { changes, rows, type PgQueryable } from './pool.js';

const PART_COLUMNS = 'p.id, p.recipient_id, p.part_number, p.parts_total, p.state, p.last_status, p.final_at, p.claimed_by, p.credits, p.campaign_id, pc.client_id';
/** A part with its campaign's client (whose credits its charge or release moves), in the same statement. */
const PARTS_FROM = 'message_parts p JOIN campaigns pc ON pc.id = p.campaign_id';
/**
 * What an SMPP customer's receipt needs of the recipient's campaign (the campaign's text only for
 * an SMPP submit: an HTTP campaign's text is not read for every status change).
 */
const SMPP_COLUMNS = 'c.id AS campaign_id, c.smpp_account_id, c.smpp_submit, c.created_at AS campaign_created_at, '
  + 'CASE WHEN c.smpp_account_id IS NULL THEN NULL ELSE c.text END AS smpp_text';
const RECIPIENT_COLUMNS = `r.id, r.status, r.last_status, r.msisdn, r.client_reference, c.client_id, c.sender, cl.webhook_url, ${SMPP_COLUMNS}`;
/** The (transport, message id) pair's advisory transaction lock key (the one every writer of that pair takes). */
const PAIR_LOCK = `pg_advisory_xact_lock(hashtextextended(u.t || ':' || u.m, 0))`;

export interface Pair {
  transport: string;
  messageId: string;
}

/**
 * The pairs' advisory transaction locks, in one statement and a fixed order (two batches locking
 * overlapping pairs wait for each other instead of deadlocking).
 */
export async function lockPairs(db: PgQueryable, pairs: readonly Pair[]): Promise<void> {
  if (pairs.length === 0) return;
  await db.query(`SELECT ${PAIR_LOCK} FROM (SELECT DISTINCT t, m FROM unnest($1::text[], $2::text[]) AS x(t, m) ORDER BY t, m) u`,
    [pairs.map((p) => p.transport), pairs.map((p) => p.messageId)]);
}

/**
 * The pairs' advisory locks, then the parts with these ids locked FOR UPDATE, in one statement:
 * the locks are taken (an InitPlan) before the parts are read.
 */
export function lockPairsAndParts(db: PgQueryable, pairs: readonly Pair[], partIds: readonly number[]): Promise<PartRow[]> {
  return rows<PartRow>(db,
    `SELECT ${PART_COLUMNS} FROM ${PARTS_FROM}
     WHERE p.id = ANY($3::bigint[])
       AND (SELECT count(*) FROM (SELECT ${PAIR_LOCK} FROM (SELECT DISTINCT t, m FROM unnest($1::text[], $2::text[]) AS x(t, m) ORDER BY t, m) u) l) >= 0
     ORDER BY p.id FOR UPDATE OF p`,
    [pairs.map((p) => p.transport), pairs.map((p) => p.messageId), partIds]);
}

/** A target with its part and, unless the recipient row is gone (its fields null), the recipient's context. */
export type TargetWithContext = MessageIdTarget & PartRow & { [K in Exclude<keyof RecipientRow, 'id'> as `recipient_${K}`]: RecipientRow[K] | null };

/**
 * The part each pair names now (its newest part with that message id) with the part's row and its
 * recipient's context, in one statement; pairs naming none are left out.
 */
export function targetsWithContext(db: PgQueryable, pairs: readonly Pair[]): Promise<TargetWithContext[]> {
  if (pairs.length === 0) return Promise.resolve([]);
  return rows<TargetWithContext>(db,
    `SELECT u.transport, u.message_id, p.id AS part_id, ${PART_COLUMNS},
            r.status AS recipient_status, r.last_status AS recipient_last_status, r.msisdn AS recipient_msisdn,
            r.client_reference AS recipient_client_reference, c.client_id AS recipient_client_id, c.sender AS recipient_sender,
            cl.webhook_url AS recipient_webhook_url, c.id AS recipient_campaign_id, c.smpp_account_id AS recipient_smpp_account_id,
            c.smpp_submit AS recipient_smpp_submit, c.created_at AS recipient_campaign_created_at,
            CASE WHEN c.smpp_account_id IS NULL THEN NULL ELSE c.text END AS recipient_smpp_text
     FROM (SELECT DISTINCT t AS transport, m AS message_id FROM unnest($1::text[], $2::text[]) AS x(t, m)) u
     JOIN message_parts p ON p.id = (SELECT id FROM message_parts WHERE transport = u.transport AND message_id = u.message_id ORDER BY id DESC LIMIT 1)
     JOIN campaigns pc ON pc.id = p.campaign_id
     LEFT JOIN recipients r ON r.id = p.recipient_id
     LEFT JOIN campaigns c ON c.id = r.campaign_id
     LEFT JOIN clients cl ON cl.id = c.client_id`,
    [pairs.map((p) => p.transport), pairs.map((p) => p.messageId)]);
}

/** The parts with these ids, not locked. */
export function partsById(db: PgQueryable, partIds: readonly number[]): Promise<PartRow[]> {
  if (partIds.length === 0) return Promise.resolve([]);
  return rows<PartRow>(db, `SELECT ${PART_COLUMNS} FROM ${PARTS_FROM} WHERE p.id = ANY($1::bigint[])`, [partIds]);
}

/**
 * Recipients with their Delivery Receipt context; `lock`: FOR UPDATE, in id order. A recipient
 * that no longer exists is left out.
 */
export function recipientsById(db: PgQueryable, recipientIds: readonly number[], lock: boolean): Promise<RecipientRow[]> {
  if (recipientIds.length === 0) return Promise.resolve([]);
  return rows<RecipientRow>(db,
    `SELECT ${RECIPIENT_COLUMNS} FROM recipients r JOIN campaigns c ON c.id = r.campaign_id JOIN clients cl ON cl.id = c.client_id
     WHERE r.id = ANY($1::bigint[]) ORDER BY r.id${lock ? ' FOR UPDATE OF r' : ''}`, [recipientIds]);
}

/** Every part of these recipients. */
export function partsOfRecipients(db: PgQueryable, recipientIds: readonly number[]): Promise<PartRow[]> {
  if (recipientIds.length === 0) return Promise.resolve([]);
  return rows<PartRow>(db, `SELECT ${PART_COLUMNS} FROM ${PARTS_FROM} WHERE p.recipient_id = ANY($1::bigint[]) ORDER BY p.recipient_id, p.part_number`,
    [recipientIds]);
}

/** The unmatched receipts of the pairs, oldest first, locked FOR UPDATE (an expiry sweep waits, then passes them over). */
export function unmatchedOf(db: PgQueryable, pairs: readonly Pair[]): Promise<UnmatchedReceiptRow[]> {
  if (pairs.length === 0) return Promise.resolve([]);
  return rows<UnmatchedReceiptRow>(db,
    `SELECT r.id, r.transport, r.message_id, r.status, r.final, r.error_code FROM receipts r
     JOIN (SELECT DISTINCT t, m FROM unnest($1::text[], $2::text[]) AS x(t, m)) u ON r.transport = u.t AND r.message_id = u.m
     WHERE r.match_state = 'pending' ORDER BY r.id FOR UPDATE OF r`,
    [pairs.map((p) => p.transport), pairs.map((p) => p.messageId)]);
}

/** Up to `limit` unmatched receipts whose message id names a part now (oldest first), not locked: candidates for the sweep. */
export function matchableCandidates(db: PgQueryable, limit: number): Promise<(UnmatchedReceiptRow & { part_id: number })[]> {
  return rows<UnmatchedReceiptRow & { part_id: number }>(db,
    `SELECT r.id, r.transport, r.message_id, r.status, r.final, r.error_code, p.id AS part_id FROM receipts r
     CROSS JOIN LATERAL (SELECT id FROM message_parts WHERE transport = r.transport AND message_id = r.message_id ORDER BY id DESC LIMIT 1) p
     WHERE r.match_state = 'pending' ORDER BY r.id LIMIT $1`, [limit]);
}

/** Those of the receipts still unmatched, locked FOR UPDATE, oldest first. */
export function stillUnmatched(db: PgQueryable, receiptIds: readonly number[]): Promise<UnmatchedReceiptRow[]> {
  if (receiptIds.length === 0) return Promise.resolve([]);
  return rows<UnmatchedReceiptRow>(db,
    `SELECT r.id, r.transport, r.message_id, r.status, r.final, r.error_code FROM receipts r
     WHERE r.id = ANY($1::bigint[]) AND r.match_state = 'pending' ORDER BY r.id FOR UPDATE OF r`, [receiptIds]);
}

export interface SubmittedWrite { partId: number; claimedBy: string | null; messageId: string }
export interface RequeueWrite { partId: number; claimedBy: string | null; attempts: number; dueAtMs: number; status: string; errorCode: string | null }
export interface FailWrite { partId: number; claimedBy: string | null; attempts: number; status: string; errorCode: string | null }

/** Claims ending in 'submitted', fenced: only a part still 'submitting' under its claim stamp changes. */
export async function markSubmitted(db: PgQueryable, parts: readonly SubmittedWrite[], nowMs: number): Promise<number> {
  if (parts.length === 0) return 0;
  return changes(db,
    `UPDATE message_parts p SET state = 'submitted', message_id = u.message_id, attempts = p.attempts + 1, submitted_at = $1,
       last_error_code = NULL, claimed_by = NULL, updated_at = $1
     FROM unnest($2::bigint[], $3::text[], $4::text[]) AS u(id, message_id, claimed_by)
     WHERE p.id = u.id AND p.state = 'submitting' AND p.claimed_by IS NOT DISTINCT FROM u.claimed_by`,
    [nowMs, parts.map((p) => p.partId), parts.map((p) => p.messageId), parts.map((p) => p.claimedBy)]);
}

/** Claims ending back in 'queued', fenced as markSubmitted. */
export async function requeue(db: PgQueryable, parts: readonly RequeueWrite[], nowMs: number): Promise<number> {
  if (parts.length === 0) return 0;
  return changes(db,
    `UPDATE message_parts p SET state = 'queued', attempts = u.attempts, next_attempt_at = u.due, last_status = u.status, last_error_code = u.error_code,
       claimed_by = NULL, updated_at = $1
     FROM unnest($2::bigint[], $3::text[], $4::bigint[], $5::bigint[], $6::text[], $7::text[]) AS u(id, claimed_by, attempts, due, status, error_code)
     WHERE p.id = u.id AND p.state = 'submitting' AND p.claimed_by IS NOT DISTINCT FROM u.claimed_by`,
    [nowMs, parts.map((p) => p.partId), parts.map((p) => p.claimedBy), parts.map((p) => p.attempts), parts.map((p) => p.dueAtMs),
      parts.map((p) => p.status), parts.map((p) => p.errorCode)]);
}

/** Claims ending 'undelivered', fenced as markSubmitted. */
export async function fail(db: PgQueryable, parts: readonly FailWrite[], nowMs: number): Promise<number> {
  if (parts.length === 0) return 0;
  return changes(db,
    `UPDATE message_parts p SET state = 'undelivered', attempts = u.attempts, last_status = u.status, last_error_code = u.error_code,
       final_at = $1, claimed_by = NULL, updated_at = $1
     FROM unnest($2::bigint[], $3::text[], $4::bigint[], $5::text[], $6::text[]) AS u(id, claimed_by, attempts, status, error_code)
     WHERE p.id = u.id AND p.state = 'submitting' AND p.claimed_by IS NOT DISTINCT FROM u.claimed_by`,
    [nowMs, parts.map((p) => p.partId), parts.map((p) => p.claimedBy), parts.map((p) => p.attempts), parts.map((p) => p.status), parts.map((p) => p.errorCode)]);
}

/** A receipt's status on a part: `state` null notes the status only; a final state sets final_at. */
export interface PartStatusWrite { partId: number; state: Extract<PartState, 'delivered' | 'undelivered'> | null; status: string; errorCode: string | null }

/** Receipt statuses onto parts, never over a final state. */
export async function writePartStatuses(db: PgQueryable, writes: readonly PartStatusWrite[], nowMs: number): Promise<number> {
  if (writes.length === 0) return 0;
  return changes(db,
    `UPDATE message_parts p SET state = COALESCE(u.state, p.state), last_status = u.status,
       last_error_code = CASE WHEN u.state IS NULL THEN p.last_error_code ELSE u.error_code END,
       final_at = CASE WHEN u.state IS NULL THEN p.final_at ELSE $1 END, updated_at = $1
     FROM unnest($2::bigint[], $3::text[], $4::text[], $5::text[]) AS u(id, state, status, error_code)
     WHERE p.id = u.id AND p.state NOT IN ('delivered', 'undelivered')`,
    [nowMs, writes.map((w) => w.partId), writes.map((w) => w.state), writes.map((w) => w.status), writes.map((w) => w.errorCode)]);
}

export interface RecipientStatusWrite { recipientId: number; status: RecipientStatus; lastStatus: string | null }

export async function writeRecipientStatuses(db: PgQueryable, writes: readonly RecipientStatusWrite[], nowMs: number): Promise<number> {
  if (writes.length === 0) return 0;
  return changes(db,
    `UPDATE recipients r SET status = u.status, last_status = u.last_status, updated_at = $1
     FROM unnest($2::bigint[], $3::text[], $4::text[]) AS u(id, status, last_status) WHERE r.id = u.id`,
    [nowMs, writes.map((w) => w.recipientId), writes.map((w) => w.status), writes.map((w) => w.lastStatus)]);
}

/** Unmatched receipts matched to parts (those another transaction matched or expired meanwhile are left alone). */
export async function matchReceipts(db: PgQueryable, matches: readonly { receiptId: number; partId: number }[]): Promise<number> {
  if (matches.length === 0) return 0;
  return changes(db,
    `UPDATE receipts r SET match_state = 'matched', part_id = u.part_id FROM unnest($1::bigint[], $2::bigint[]) AS u(id, part_id)
     WHERE r.id = u.id AND r.match_state = 'pending'`,
    [matches.map((m) => m.receiptId), matches.map((m) => m.partId)]);
}

/** Receipts in one statement, in order. */
export async function insertReceipts(db: PgQueryable, receipts: readonly ReceiptInsert[]): Promise<void> {
  if (receipts.length === 0) return;
  const column = <T>(pick: (r: ReceiptInsert) => T): T[] => receipts.map(pick);
  await changes(db,
    `INSERT INTO receipts (transport, message_id, status, final, error_code, done_at, raw, received_at, match_state, part_id)
     SELECT transport, message_id, status, final, error_code, done_at, raw, received_at, match_state, part_id
     FROM unnest($1::text[], $2::text[], $3::text[], $4::bigint[], $5::text[], $6::text[], $7::text[], $8::bigint[], $9::text[], $10::bigint[])
     WITH ORDINALITY AS t(transport, message_id, status, final, error_code, done_at, raw, received_at, match_state, part_id, n) ORDER BY n`,
    [column((r) => r.transport), column((r) => r.messageId), column((r) => r.status), column((r) => (r.final ? 1 : 0)), column((r) => r.errorCode),
      column((r) => r.doneAt), column((r) => r.raw), column((r) => r.receivedAt), column((r) => r.matchState), column((r) => r.partId)]);
}

/** Unmatched receipts received before the cutoff marked expired, in one statement; returned oldest first. */
export async function expireUnmatched(db: PgQueryable, receivedBeforeMs: number): Promise<ExpiredReceipt[]> {
  const expired = await rows<ExpiredReceipt>(db,
    `UPDATE receipts SET match_state = 'expired' WHERE match_state = 'pending' AND received_at < $1
     RETURNING id, transport, message_id, status, received_at`, [receivedBeforeMs]);
  return expired.sort((a, b) => a.id - b.id);
}

/**
 * What a live node takes over from expired ones (issue 11 item 2): the hooks the node registry's
 * reap runs inside its one transaction, with the ids of the nodes whose lease ran out. Each hands
 * back the work stamped with those ids (migration 1765100000001), and clears the stamp, so the
 * expired node's late writes (fenced on it) are refused and any node may take the work:
 * - parts it was submitting go back to 'queued' (at-least-once: the submit may have reached the
 *   SMSC, so a duplicate is possible, bounded by its binds x window);
 * - outbox events it had leased are due again at once instead of at the end of the lease (due at
 *   their creation time: past for any caller's clock, and first in line as the overdue events they are);
 * - campaigns it was processing are nobody's, for the next claimForProcessing to take (it deletes
 *   the partial recipients first, as after a crash).
 * The shape is the registry's ReapHook: (client in the reap's transaction, expired ids) -> rows moved.
 */
import type { PgClient } from './pool.js';

export type PgReapHook = (client: PgClient, expiredNodeIds: readonly string[]) => Promise<number>;

/** Milliseconds since the epoch on the database's clock (as the registry's leases). */
const DB_NOW_MS = `(extract(epoch from clock_timestamp()) * 1000)::bigint`;

export const requeuePartsOfExpiredNodes: PgReapHook = async (client, nodeIds) =>
  (await client.query(
    `UPDATE message_parts SET state = 'queued', claimed_by = NULL, updated_at = ${DB_NOW_MS}
     WHERE claimed_by = ANY($1::text[]) AND state = 'submitting'`, [nodeIds])).rowCount ?? 0;

export const releaseOutboxLeasesOfExpiredNodes: PgReapHook = async (client, nodeIds) =>
  (await client.query(
    `UPDATE webhook_outbox SET leased_by = NULL, next_attempt_at = LEAST(next_attempt_at, created_at)
     WHERE leased_by = ANY($1::text[]) AND state = 'pending'`, [nodeIds])).rowCount ?? 0;

export const releaseCampaignsOfExpiredNodes: PgReapHook = async (client, nodeIds) =>
  (await client.query(
    `UPDATE campaigns SET processing_by = NULL WHERE processing_by = ANY($1::text[]) AND state = 'processing'`, [nodeIds])).rowCount ?? 0;

/** Every hook, in the order the reap should run them. */
export const PG_REAP_HOOKS: readonly PgReapHook[] = [requeuePartsOfExpiredNodes, releaseOutboxLeasesOfExpiredNodes, releaseCampaignsOfExpiredNodes];

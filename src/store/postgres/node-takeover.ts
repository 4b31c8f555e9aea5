/**
 * What a live node takes over from expired ones, across the tables their stamps
 * are on: message parts, outbox leases and campaigns being processed.
 */
import { changes, type PgClient } from './pool.js';

/**
 * A NodeRegistry reap hook (src/store/postgres/node-registry.ts): inside the reaper's transaction,
 * puts the expired nodes' in-flight parts back in the queue (no attempt spent: whether the SMSC got
 * them is unknown, so at-least-once applies), and releases their outbox leases and the campaigns
 * they were processing. Returns the rows moved.
 */
export async function requeueExpiredNodes(client: PgClient, nodeIds: readonly string[]): Promise<number> {
  const parts = await changes(client,
    `UPDATE message_parts SET state = 'queued', claimed_by = NULL WHERE claimed_by = ANY($1::text[]) AND state = 'submitting'`, [nodeIds]);
  const outbox = await changes(client,
    `UPDATE webhook_outbox SET leased_by = NULL, lease_until = NULL WHERE leased_by = ANY($1::text[])`, [nodeIds]);
  const campaigns = await changes(client,
    `UPDATE campaigns SET processing_by = NULL WHERE processing_by = ANY($1::text[])`, [nodeIds]);
  return parts + outbox + campaigns;
}

/**
 * The store side of rerouting on PostgreSQL (RerouteStepStore<'async'> in
 * src/engine/steps/reroute.ts), on the caller's connection inside its transaction. The write is one
 * statement for the batch; a change is applied only while its part is still queued on the
 * transport it was read on (a part a node claimed meanwhile is 'submitting': left alone).
 */
import type { PartReroute, QueuedPart, QueuedPartsQuery } from '../dispatch-steps.js';
import { rows, type PgQueryable } from './pool.js';

const READ_QUEUED = `SELECT p.id, p.recipient_id, p.transport, p.next_attempt_at, r.msisdn, cl.name AS client_name
  FROM message_parts p
  JOIN recipients r ON r.id = p.recipient_id
  JOIN campaigns c ON c.id = p.campaign_id
  JOIN clients cl ON cl.id = c.client_id
  WHERE p.state = 'queued' AND p.id > $1 AND p.transport IS NOT NULL
    AND ($3::text[] IS NULL OR p.transport = ANY($3::text[]))
    AND ($4::bigint IS NULL OR p.next_attempt_at <= $4::bigint)
    AND ($5::bigint[] IS NULL OR p.id = ANY($5::bigint[]))
  ORDER BY p.id LIMIT $2`;

const WRITE_REROUTE = `UPDATE message_parts p SET transport = u.to_transport, next_attempt_at = u.next_attempt_at, updated_at = $5
  FROM unnest($1::bigint[], $2::text[], $3::text[], $4::bigint[]) AS u(id, from_transport, to_transport, next_attempt_at)
  WHERE p.id = u.id AND p.state = 'queued' AND p.transport = u.from_transport
  RETURNING p.id`;

export class PgRerouteStore {
  constructor(private readonly db: PgQueryable) {}

  readQueuedParts(query: QueuedPartsQuery): Promise<QueuedPart[]> {
    return rows<QueuedPart>(this.db, READ_QUEUED, [query.afterId, query.limit, query.transports, query.dueByMs, query.partIds ?? null]);
  }

  async writeReroute(changes: readonly PartReroute[], nowMs: number): Promise<PartReroute[]> {
    if (changes.length === 0) return [];
    const applied = await rows<{ id: number }>(this.db, WRITE_REROUTE,
      [changes.map((c) => c.partId), changes.map((c) => c.from), changes.map((c) => c.to), changes.map((c) => c.nextAttemptAt), nowMs]);
    const ids = new Set(applied.map((r) => r.id));
    return changes.filter((c) => ids.has(c.partId));
  }
}

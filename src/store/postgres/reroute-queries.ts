/**
 * The store side of rerouting on PostgreSQL (RerouteStepStore<'async'> in
 * src/engine/steps/reroute.ts), on the caller's connection inside its transaction. The write is one
 * statement for the batch; a change is applied only while its part is still queued on the
 * transport it was read on (a part a node claimed meanwhile is 'submitting': left alone).
 */
import type { PartReroute, QueuedPart, QueuedPartsQuery } from '../dispatch-steps.js';
import { rows, type PgQueryable } from './pool.js';

const QUEUED_PART = `SELECT p.id, p.recipient_id, p.transport, p.next_attempt_at, r.msisdn, cl.name AS client_name
  FROM message_parts p
  JOIN recipients r ON r.id = p.recipient_id
  JOIN campaigns c ON c.id = p.campaign_id
  JOIN clients cl ON cl.id = c.client_id`;

/** One statement per kind of query (these parts by id; every queued part in id order; the due ones on some transports), each planned for its own filter. */
const READ_QUEUED = {
  byIds: `${QUEUED_PART} WHERE p.id = ANY($1::bigint[]) AND p.state = 'queued' AND p.transport IS NOT NULL ORDER BY p.id`,
  all: `${QUEUED_PART} WHERE p.id > $1 AND p.state = 'queued' AND p.transport IS NOT NULL ORDER BY p.id LIMIT $2`,
  due: `${QUEUED_PART} WHERE p.state = 'queued' AND p.next_attempt_at <= $3 AND p.id > $1 AND p.transport = ANY($4::text[]) ORDER BY p.id LIMIT $2`,
} as const;

const WRITE_REROUTE = `UPDATE message_parts p SET transport = u.to_transport, next_attempt_at = u.next_attempt_at, updated_at = $5
  FROM unnest($1::bigint[], $2::text[], $3::text[], $4::bigint[]) AS u(id, from_transport, to_transport, next_attempt_at)
  WHERE p.id = u.id AND p.state = 'queued' AND p.transport = u.from_transport
  RETURNING p.id`;

export class PgRerouteStore {
  constructor(private readonly db: PgQueryable) {}

  readQueuedParts(query: QueuedPartsQuery): Promise<QueuedPart[]> {
    if (query.partIds !== undefined) return rows<QueuedPart>(this.db, READ_QUEUED.byIds, [query.partIds]);
    if (query.dueByMs === null || query.transports === null) return rows<QueuedPart>(this.db, READ_QUEUED.all, [query.afterId, query.limit]);
    return rows<QueuedPart>(this.db, READ_QUEUED.due, [query.afterId, query.limit, query.dueByMs, query.transports]);
  }

  async writeReroute(changes: readonly PartReroute[], nowMs: number): Promise<PartReroute[]> {
    if (changes.length === 0) return [];
    const applied = await rows<{ id: number }>(this.db, WRITE_REROUTE,
      [changes.map((c) => c.partId), changes.map((c) => c.from), changes.map((c) => c.to), changes.map((c) => c.nextAttemptAt), nowMs]);
    const ids = new Set(applied.map((r) => r.id));
    return changes.filter((c) => ids.has(c.partId));
  }
}

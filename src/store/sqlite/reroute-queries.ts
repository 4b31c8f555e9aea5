/**
 * The store side of rerouting on SQLite (RerouteStepStore<'sync'> in src/engine/steps/reroute.ts):
 * run inside the caller's db.transaction. A change is applied only while its part is still queued
 * on the transport it was read on.
 */
import type { PartReroute, QueuedPart, QueuedPartsQuery } from '../dispatch-steps.js';
import type { SqliteDatabase } from './database.js';

const READ_QUEUED = `SELECT p.id, p.recipient_id, p.transport, p.next_attempt_at, r.msisdn, cl.name AS client_name
  FROM message_parts p
  JOIN recipients r ON r.id = p.recipient_id
  JOIN campaigns c ON c.id = p.campaign_id
  JOIN clients cl ON cl.id = c.client_id
  WHERE p.state = 'queued' AND p.id > @after AND p.transport IS NOT NULL
    AND (@transports IS NULL OR p.transport IN (SELECT value FROM json_each(@transports)))
    AND (@dueBy IS NULL OR p.next_attempt_at <= @dueBy)
    AND (@ids IS NULL OR p.id IN (SELECT value FROM json_each(@ids)))
  ORDER BY p.id LIMIT @limit`;

const WRITE_REROUTE = `UPDATE message_parts SET transport = u.to_transport, next_attempt_at = u.next_attempt_at, updated_at = @now
  FROM (SELECT value ->> 0 AS id, value ->> 1 AS from_transport, value ->> 2 AS to_transport, value ->> 3 AS next_attempt_at FROM json_each(@rows)) AS u
  WHERE message_parts.id = u.id AND message_parts.state = 'queued' AND message_parts.transport = u.from_transport
  RETURNING message_parts.id`;

export class SqliteRerouteStore {
  private readonly read;
  private readonly write;

  constructor(db: SqliteDatabase) {
    this.read = db.prepare<[{ after: number; limit: number; transports: string | null; dueBy: number | null; ids: string | null }], QueuedPart>(READ_QUEUED);
    this.write = db.prepare<[{ now: number; rows: string }], number>(WRITE_REROUTE).pluck();
  }

  readQueuedParts(query: QueuedPartsQuery): QueuedPart[] {
    return this.read.all({ after: query.afterId, limit: query.limit, transports: query.transports === null ? null : JSON.stringify(query.transports), dueBy: query.dueByMs, ids: query.partIds === undefined ? null : JSON.stringify(query.partIds) });
  }

  writeReroute(changes: readonly PartReroute[], nowMs: number): PartReroute[] {
    if (changes.length === 0) return [];
    const applied = new Set(this.write.all({ now: nowMs, rows: JSON.stringify(changes.map((c) => [c.partId, c.from, c.to, c.nextAttemptAt])) }));
    return changes.filter((c) => applied.has(c.partId));
  }
}

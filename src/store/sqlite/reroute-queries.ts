/**
 * The store side of rerouting on SQLite (RerouteStepStore<'sync'> in src/engine/steps/reroute.ts):
 * run inside the caller's db.transaction. A change is applied only while its part is still queued
 * on the transport it was read on.
 */
import type { PartReroute, QueuedPart, QueuedPartsQuery } from '../dispatch-steps.js';
import type { SqliteDatabase } from './database.js';

const QUEUED_PART = `SELECT p.id, p.recipient_id, p.transport, p.next_attempt_at, r.msisdn, cl.name AS client_name
  FROM message_parts p
  JOIN recipients r ON r.id = p.recipient_id
  JOIN campaigns c ON c.id = p.campaign_id
  JOIN clients cl ON cl.id = c.client_id`;

/**
 * One statement per kind of query (exported so test/store/live-row-index-plans.test.ts checks their plans), each with the plan it needs: these parts by id; every queued
 * part in id order (by rowid: the unary + keeps SQLite off the state index, which would read
 * and sort the whole queue for every batch); the due ones on some transports (the queued parts'
 * partial index, message_parts_fair_claim).
 */
export const READ_QUEUED = {
  byIds: `${QUEUED_PART} WHERE p.id IN (SELECT value FROM json_each(@ids)) AND +p.state = 'queued' AND p.transport IS NOT NULL ORDER BY p.id`,
  // The first batch starts at the oldest queued part, not at the table's first row (delivered history).
  // That part is read from the queued parts' partial index (migrations/1766400000001-live-row-indexes.ts):
  // left to itself SQLite would walk the rowids from the first, through the delivered history.
  all: `${QUEUED_PART} WHERE p.id > (CASE WHEN @after > 0 THEN @after
      ELSE COALESCE((SELECT MIN(id) FROM message_parts INDEXED BY message_parts_fair_claim WHERE state = 'queued'), 1) - 1 END)
    AND +p.state = 'queued' AND p.transport IS NOT NULL ORDER BY p.id LIMIT @limit`,
  due: `${QUEUED_PART} WHERE p.state = 'queued' AND p.next_attempt_at <= @dueBy AND p.id > @after
    AND p.transport IN (SELECT value FROM json_each(@transports)) ORDER BY p.id LIMIT @limit`,
} as const;

const WRITE_REROUTE = `UPDATE message_parts SET transport = u.to_transport, next_attempt_at = u.next_attempt_at, updated_at = @now
  FROM (SELECT value ->> 0 AS id, value ->> 1 AS from_transport, value ->> 2 AS to_transport, value ->> 3 AS next_attempt_at FROM json_each(@rows)) AS u
  WHERE message_parts.id = u.id AND message_parts.state = 'queued' AND message_parts.transport = u.from_transport
  RETURNING message_parts.id`;

export class SqliteRerouteStore {
  private readonly byIds;
  private readonly all;
  private readonly due;
  private readonly write;

  constructor(db: SqliteDatabase) {
    this.byIds = db.prepare<[{ ids: string }], QueuedPart>(READ_QUEUED.byIds);
    this.all = db.prepare<[{ after: number; limit: number }], QueuedPart>(READ_QUEUED.all);
    this.due = db.prepare<[{ after: number; limit: number; dueBy: number; transports: string }], QueuedPart>(READ_QUEUED.due);
    this.write = db.prepare<[{ now: number; rows: string }], number>(WRITE_REROUTE).pluck();
  }

  readQueuedParts(query: QueuedPartsQuery): QueuedPart[] {
    if (query.partIds !== undefined) return this.byIds.all({ ids: JSON.stringify(query.partIds) });
    if (query.dueByMs === null || query.transports === null) return this.all.all({ after: query.afterId, limit: query.limit });
    return this.due.all({ after: query.afterId, limit: query.limit, dueBy: query.dueByMs, transports: JSON.stringify(query.transports) });
  }

  writeReroute(changes: readonly PartReroute[], nowMs: number): PartReroute[] {
    if (changes.length === 0) return [];
    const applied = new Set(this.write.all({ now: nowMs, rows: JSON.stringify(changes.map((c) => [c.partId, c.from, c.to, c.nextAttemptAt])) }));
    return changes.filter((c) => applied.has(c.partId));
  }
}

import type { MigrationInterface, QueryRunner } from 'typeorm';
import { dialectOf } from './dialect.js';

/**
 * webhook_outbox's two state indexes become partial, on SQLite: a row is in webhook_outbox_due only
 * while it is pending, and in webhook_outbox_dead only while it is dead. A delivered row (nearly
 * every row, for good) so sits in neither: queuing an event writes one index entry (due), its
 * delivery removes it, and neither touches webhook_outbox_dead, where before both rewrote an entry
 * of each index on every state change.
 *
 * Every query that reads them says the state as a literal that implies the index's WHERE
 * (EXPLAIN QUERY PLAN on SQLite 3.51, checked in test/webhooks/outbox-query-plans.test.ts):
 * - the sender's full due read, `state = 'pending' AND next_attempt_at <= ? ORDER BY next_attempt_at, id`:
 *   SEARCH o USING INDEX webhook_outbox_due (next_attempt_at<?), in the order asked (the rowid follows the column);
 * - the earliest pending time, `MIN(next_attempt_at) WHERE state = 'pending'`: SEARCH USING COVERING INDEX webhook_outbox_due;
 * - the pending counts, `COUNT(*) WHERE state = 'pending'`: SCAN USING COVERING INDEX webhook_outbox_due;
 *   by client, `client_id = c.id AND state = 'pending'`: SCAN o USING INDEX webhook_outbox_due (the pending rows only);
 * - the dead letters' list, count and replay, `state = 'dead' [AND client_id = ?] [AND dead_at >= ?]`:
 *   SEARCH USING COVERING INDEX webhook_outbox_dead (client_id=? AND dead_at>?), or a covering scan of the dead rows.
 * The sender's read from its cursor (`id > ?`) walks the primary key (rowid>?). Redrive keeps
 * webhook_outbox_redrive, already partial on the dead rows of transient failures.
 *
 * PostgreSQL keeps its indexes as they are: its outbox is read by lease (src/store/postgres/webhook-store.ts),
 * with plans of its own.
 */
export class WebhookOutboxPartialIndexes1766400000002 implements MigrationInterface {
  name = 'WebhookOutboxPartialIndexes1766400000002';

  async up(queryRunner: QueryRunner): Promise<void> {
    if (dialectOf(queryRunner) === 'postgres') return;
    for (const sql of [
      `DROP INDEX webhook_outbox_due`,
      `DROP INDEX webhook_outbox_dead`,
      `CREATE INDEX webhook_outbox_due ON webhook_outbox(next_attempt_at) WHERE state = 'pending'`,
      `CREATE INDEX webhook_outbox_dead ON webhook_outbox(client_id, dead_at) WHERE state = 'dead'`,
    ]) await queryRunner.query(sql);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    if (dialectOf(queryRunner) === 'postgres') return;
    for (const sql of [
      `DROP INDEX webhook_outbox_due`,
      `DROP INDEX webhook_outbox_dead`,
      `CREATE INDEX webhook_outbox_due ON webhook_outbox(state, next_attempt_at)`,
      `CREATE INDEX webhook_outbox_dead ON webhook_outbox(client_id, state, dead_at)`,
    ]) await queryRunner.query(sql);
  }
}

/** UndecodablePduStore (src/store/sqlite/undecodable-pdu-store.ts) on PostgreSQL. */
import type { UndecodablePduRow } from '../entities.js';
import type { Async } from '../ports.js';
import type { UndecodablePduInsert, UndecodablePduStore } from '../sqlite/undecodable-pdu-store.js';
import { changes, rows, type PgPool } from './pool.js';

export class PgUndecodablePduStore implements Async<UndecodablePduStore> {
  constructor(private readonly pool: PgPool) {}

  async insert(r: UndecodablePduInsert): Promise<void> {
    await changes(this.pool, 'INSERT INTO undecodable_pdus (transport, device, hex, reason_code, reason, received_at) VALUES ($1, $2, $3, $4, $5, $6)',
      [r.transport, r.device, r.hex, r.reasonCode, r.reason, r.receivedAtMs]);
  }

  list(): Promise<UndecodablePduRow[]> {
    return rows<UndecodablePduRow>(this.pool, 'SELECT * FROM undecodable_pdus ORDER BY id');
  }
}

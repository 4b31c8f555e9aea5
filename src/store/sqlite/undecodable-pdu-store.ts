/**
 * The undecodable_pdus table: PDUs a modem handed up that the codec could not read, kept with
 * their raw hex and the reason so that deleting them from the SIM loses nothing.
 */
import type { SqliteDatabase } from './database.js';
import type { UndecodablePduRow } from '../entities.js';

export interface UndecodablePduInsert {
  transport: string;
  device: string;
  hex: string;
  reasonCode: string;
  reason: string;
  receivedAtMs: number;
}

export class UndecodablePduStore {
  private readonly insertStatement;
  private readonly listStatement;

  constructor(db: SqliteDatabase) {
    this.insertStatement = db.prepare<[string, string, string, string, string, number], unknown>(
      `INSERT INTO undecodable_pdus (transport, device, hex, reason_code, reason, received_at) VALUES (?, ?, ?, ?, ?, ?)`,
    );
    this.listStatement = db.prepare<[], UndecodablePduRow>(`SELECT * FROM undecodable_pdus ORDER BY id`);
  }

  insert(row: UndecodablePduInsert): void {
    this.insertStatement.run(row.transport, row.device, row.hex, row.reasonCode, row.reason, row.receivedAtMs);
  }

  list(): UndecodablePduRow[] {
    return this.listStatement.all();
  }
}

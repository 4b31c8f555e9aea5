/**
 * Many rows inserted with multi-row INSERTs on SQLite: at most ROWS_PER_INSERT rows a statement
 * (parameters a row x 64 stays well under SQLite's 32,766), each statement prepared once per row
 * count and reused, rows in the order given (so ids are assigned in that order). The receipts,
 * the new parts and the webhook outbox rows of a batch are written with it.
 */
import type { Statement } from 'better-sqlite3';
import type { SqliteDatabase } from './database.js';

const ROWS_PER_INSERT = 64;

export class MultiRowInsert<Row> {
  /** Statements by row count, prepared when first needed. */
  private readonly statements = new Map<number, Statement<unknown[], unknown>>();

  constructor(
    private readonly db: SqliteDatabase,
    /** `INSERT INTO table (columns) VALUES`, without the row tuples. */
    private readonly insertInto: string,
    /** One row's tuple, e.g. `(?, ?, 'pending', ?)`. */
    private readonly rowTuple: string,
    /** A row's parameters, in the tuple's order. */
    private readonly params: (row: Row) => readonly unknown[],
    /** A `RETURNING ...` clause for runReturning, e.g. `RETURNING id, campaign_id`; none by default. */
    private readonly returning = '',
  ) {}

  run(rows: readonly Row[]): void {
    for (let start = 0; start < rows.length; start += ROWS_PER_INSERT) {
      const chunk = rows.slice(start, start + ROWS_PER_INSERT);
      this.statementFor(chunk.length).run(...chunk.flatMap(this.params));
    }
  }

  /** Inserts as run() does and returns what the RETURNING clause names, every row's (in no promised order). */
  runReturning<Out>(rows: readonly Row[]): Out[] {
    const out: Out[] = [];
    for (let start = 0; start < rows.length; start += ROWS_PER_INSERT) {
      const chunk = rows.slice(start, start + ROWS_PER_INSERT);
      for (const row of this.statementFor(chunk.length).all(...chunk.flatMap(this.params))) out.push(row as Out);
    }
    return out;
  }

  private statementFor(rows: number): Statement<unknown[], unknown> {
    let statement = this.statements.get(rows);
    if (statement === undefined) {
      statement = this.db.prepare<unknown[], unknown>(`${this.insertInto} ${Array.from({ length: rows }, () => this.rowTuple).join(', ')}${this.returning === '' ? '' : ` ${this.returning}`}`);
      this.statements.set(rows, statement);
    }
    return statement;
  }
}

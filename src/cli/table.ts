/**
 * Human output of the list commands: a header and one line per row, columns padded to the widest
 * cell (two spaces apart), times as ISO-8601 UTC, and a placeholder line when there is no row.
 * `--json` output does not come through here.
 */
export function formatTable(columns: readonly string[], rows: readonly (readonly (string | number | null)[])[], empty: string): string {
  if (rows.length === 0) return empty;
  const cells = [columns, ...rows.map((row) => row.map((cell) => (cell === null ? '-' : String(cell))))];
  const widths = columns.map((_, i) => Math.max(...cells.map((row) => (row[i] ?? '').length)));
  return cells.map((row) => row.map((cell, i) => (i === row.length - 1 ? cell : cell.padEnd(widths[i] ?? 0))).join('  ')).join('\n');
}

/** Milliseconds since the epoch as ISO-8601 UTC; null stays null. */
export function isoTime(ms: number | null | undefined): string | null {
  return ms === null || ms === undefined ? null : new Date(ms).toISOString();
}

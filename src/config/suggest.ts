/**
 * The known key nearest a misspelt one, for `unknown key "tranports" at /: did you mean
 * "transports"?`. Nearest is the fewest single-character edits (Damerau-Levenshtein: insert, delete,
 * substitute, swap two neighbours), case-insensitive; a key further than a third of its length (at
 * least 1, at most 3 edits) away is no suggestion, so a key unlike every known one gets none.
 */
export function nearestKey(given: string, known: readonly string[]): string | undefined {
  const limit = Math.min(3, Math.max(1, Math.floor(given.length / 3)));
  let best: { key: string; distance: number } | undefined;
  for (const key of known) {
    const distance = editDistance(given.toLowerCase(), key.toLowerCase());
    if (distance <= limit && (best === undefined || distance < best.distance)) best = { key, distance };
  }
  return best?.key;
}

function editDistance(a: string, b: string): number {
  const rows = a.length + 1;
  const cols = b.length + 1;
  const d: number[][] = Array.from({ length: rows }, (_, i) => Array.from({ length: cols }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)));
  const at = (i: number, j: number): number => (d[i] as number[])[j] as number;
  for (let i = 1; i < rows; i++) {
    for (let j = 1; j < cols; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let value = Math.min(at(i - 1, j) + 1, at(i, j - 1) + 1, at(i - 1, j - 1) + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) value = Math.min(value, at(i - 2, j - 2) + 1);
      (d[i] as number[])[j] = value;
    }
  }
  return at(a.length, b.length);
}

/**
 * Opt-out keywords (issue 14 item 5): a client's list is off unless set; an inbound text opts its
 * sender out when, trimmed and case-folded, it equals one of the keywords (so "stop " and "Stop"
 * match STOP, "STOP please" does not).
 */

/** Unicode case folding as far as JavaScript offers it: upper then lower (ß -> SS -> ss, ſ -> S -> s). */
export function foldKeyword(text: string): string {
  return text.trim().toUpperCase().toLowerCase();
}

/** Parses --keywords STOP,STOPALL: comma-separated, each trimmed, none empty; folded and de-duplicated. */
export function parseKeywordList(raw: string): { ok: true; keywords: string[] } | { ok: false; reason: string } {
  const items = raw.split(',').map((item) => item.trim());
  if (items.some((item) => item.length === 0)) return { ok: false, reason: `--keywords '${raw}' has an empty keyword` };
  return { ok: true, keywords: [...new Set(items.map(foldKeyword))] };
}

export function isOptoutText(text: string, keywords: readonly string[]): boolean {
  if (keywords.length === 0) return false;
  return keywords.includes(foldKeyword(text));
}

/**
 * Opt-out keywords: a client's list is off unless set; an inbound text opts its sender out when,
 * normalised, it equals one of the keywords normalised the same way. The whole text must be the
 * keyword: "STOP please" and "STOP SENDING ME THE BILL?" do not match STOP.
 *
 * Normalised (normalizeKeywordText): Unicode NFKC (so fullwidth ＳＴＯＰ is STOP, TS 23.038 UCS-2
 * handsets with East Asian keyboards send those forms), case-folded, whitespace trimmed at both
 * ends, and punctuation (Unicode category P) and whitespace trimmed at the end. Carriers'
 * compliance practice (CTIA's messaging principles, Ofcom and ComReg codes) treats "STOP.",
 * "Stop!" and "stop " as the keyword itself.
 */

/** Unicode case folding as far as JavaScript offers it: upper then lower (ß -> SS -> ss, ſ -> S -> s). */
export function foldKeyword(text: string): string {
  return text.trim().toUpperCase().toLowerCase();
}

/** Trailing punctuation and whitespace, in any mix ("STOP !", "STOP..."). */
const TRAILING_PUNCTUATION = /[\p{P}\s]+$/u;

/** The form a text and a keyword are compared in (see the module comment). */
export function normalizeKeywordText(text: string): string {
  return foldKeyword(text.normalize('NFKC')).replace(TRAILING_PUNCTUATION, '');
}

/** Parses --keywords STOP,STOPALL: comma-separated, each trimmed, none empty; folded and de-duplicated. */
export function parseKeywordList(raw: string): { ok: true; keywords: string[] } | { ok: false; reason: string } {
  const items = raw.split(',').map((item) => item.trim());
  if (items.some((item) => item.length === 0)) return { ok: false, reason: `--keywords '${raw}' has an empty keyword` };
  return { ok: true, keywords: [...new Set(items.map(foldKeyword))] };
}

export function isOptoutText(text: string, keywords: readonly string[]): boolean {
  if (keywords.length === 0) return false;
  const normalized = normalizeKeywordText(text);
  if (normalized.length === 0) return false;
  return keywords.some((keyword) => normalizeKeywordText(keyword) === normalized);
}

/**
 * The text replacements the interface specification requires before encoding detection
 * (SPEC "Message text rules"): typographic quotes, dashes, ellipsis and bullet become their
 * GSM-7 look-alikes. Each replacement is one UTF-16 code unit for one, so a replaced text has
 * the same length and every index keeps its meaning.
 */
export const TEXT_REPLACEMENTS: ReadonlyArray<readonly [from: string, to: string]> = [
  ['\u2018', "'"], // LEFT SINGLE QUOTATION MARK
  ['\u2019', "'"], // RIGHT SINGLE QUOTATION MARK
  ['\u201a', "'"], // SINGLE LOW-9 QUOTATION MARK
  ['\u201b', "'"], // SINGLE HIGH-REVERSED-9 QUOTATION MARK
  ['\u201c', '"'], // LEFT DOUBLE QUOTATION MARK
  ['\u201d', '"'], // RIGHT DOUBLE QUOTATION MARK
  ['\u201e', '"'], // DOUBLE LOW-9 QUOTATION MARK
  ['\u201f', '"'], // DOUBLE HIGH-REVERSED-9 QUOTATION MARK
  ['\u2013', '-'], // EN DASH
  ['\u2014', '-'], // EM DASH
  ['\u2026', '.'], // HORIZONTAL ELLIPSIS: one '.', as the specification says
  ['\u2022', '*'], // BULLET
];

const REPLACEMENT_BY_CHAR: ReadonlyMap<string, string> = new Map(TEXT_REPLACEMENTS);
const REPLACEABLE = /[\u2013\u2014\u2018-\u201f\u2022\u2026]/;
const REPLACEABLE_GLOBAL = new RegExp(REPLACEABLE.source, 'g');

/** Applies the specification's replacements; returns the same string when nothing needs replacing. */
export function applyReplacements(text: string): string {
  if (!REPLACEABLE.test(text)) return text;
  return text.replace(REPLACEABLE_GLOBAL, (char) => REPLACEMENT_BY_CHAR.get(char) ?? char);
}

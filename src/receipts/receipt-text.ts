/**
 * Parser for the SMPP delivery receipt text of SMPP 3.4 Appendix B:
 *   id:IIIIIIIIII sub:SSS dlvrd:DDD submit date:YYMMDDhhmm done date:YYMMDDhhmm stat:DDDDDDD err:E text:...
 *
 * Real SMSCs vary the case of the labels, their order, the spaces around the colon and leave
 * fields out, so the parser finds the known labels wherever they stand (cloudhopper-smpp's parser
 * does the same) and takes each value up to the next known label. Everything after `text:` is the
 * text, even when it contains another label. A misspelt label ("stat us:", "sta:") is not a label.
 */

/** The Appendix B labels, as they are written on the wire, mapped to field names. */
export const RECEIPT_LABELS = {
  'id': 'id',
  'sub': 'sub',
  'dlvrd': 'dlvrd',
  'submit date': 'submitDate',
  'done date': 'doneDate',
  'stat': 'stat',
  'err': 'err',
  'text': 'text',
} as const;

export type ReceiptField = (typeof RECEIPT_LABELS)[keyof typeof RECEIPT_LABELS];

export type ReceiptTextFields = { [K in ReceiptField]?: string };

export interface ParsedReceiptText extends ReceiptTextFields {
  /** The text as given, for audit and for the raw-status fallback. */
  raw: string;
  /** True when at least one known label was found. */
  recognised: boolean;
}

/**
 * A label starts the text or follows whitespace, may have spaces before its colon, and is
 * matched case-insensitively. `submit date` and `done date` allow any run of spaces or an
 * underscore between the words (seen as `submit_date` on some SMSCs).
 */
const LABEL_PATTERN = /(^|\s)(id|sub|dlvrd|submit[ _]+date|done[ _]+date|stat|err|text)\s*:/gi;

function fieldForLabel(label: string): ReceiptField {
  const key = label.toLowerCase().replace(/[ _]+/g, ' ') as keyof typeof RECEIPT_LABELS;
  return RECEIPT_LABELS[key];
}

export function parseReceiptText(text: string): ParsedReceiptText {
  const result: ParsedReceiptText = { raw: text, recognised: false };
  const starts: { field: ReceiptField; labelAt: number; valueAt: number }[] = [];
  LABEL_PATTERN.lastIndex = 0;
  for (let match = LABEL_PATTERN.exec(text); match !== null; match = LABEL_PATTERN.exec(text)) {
    const field = fieldForLabel(match[2] ?? '');
    const labelAt = match.index + (match[1] ?? '').length;
    starts.push({ field, labelAt, valueAt: match.index + match[0].length });
    if (field === 'text') break; // everything after text: belongs to the text
  }
  for (let i = 0; i < starts.length; i++) {
    const start = starts[i]!;
    const end = i + 1 < starts.length ? starts[i + 1]!.labelAt : text.length;
    // The first occurrence of a label wins: a later repeat is more likely noise than a correction.
    if (result[start.field] !== undefined) continue;
    const value = text.slice(start.valueAt, end);
    result[start.field] = start.field === 'text' ? value : value.trim();
    result.recognised = true;
  }
  return result;
}

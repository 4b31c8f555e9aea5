/**
 * Parser for the SMPP delivery receipt text of SMPP 3.4 Appendix B:
 *   id:IIIIIIIIII sub:SSS dlvrd:DDD submit date:YYMMDDhhmm done date:YYMMDDhhmm stat:DDDDDDD err:E text:...
 *
 * Real SMSCs vary the case of the labels, their order, the spaces around the colon and leave
 * fields out, so the parser finds the known labels wherever they stand (cloudhopper-smpp's parser
 * does the same). A misspelt label ("stat us:", "sta:") is not a label.
 *
 * Values: every field but `text` is one word (Appendix B gives each a fixed form: an id, three
 * digits, a date, a seven-letter state, an error code), so words after it that carry no label
 * (trailing notes some SMSCs add when there is no `text:`) are not part of the value.
 *
 * Where `text:` stands decides what the rest means, because the text quotes the message and may
 * itself contain `stat:` or `id:`:
 * - Appendix B layout, `stat:` before `text:`: the text runs to the end; labels inside it are text.
 * - Text first (cloudhopper's fixture `... text: stat:DELIVRD`, some SMSCs put it before the
 *   state): the SMSC's own fields follow the quoted text, so each field that did not appear before
 *   `text:` is read from its LAST occurrence after it, and the text ends where the first of those
 *   begins. A `stat:` inside the quoted text thus never wins over the one the SMSC wrote.
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

interface LabelAt {
  field: ReceiptField;
  /** Index of the label's first character. */
  labelAt: number;
  /** Index just after the colon. */
  valueAt: number;
}

function fieldForLabel(label: string): ReceiptField {
  const key = label.toLowerCase().replace(/[ _]+/g, ' ') as keyof typeof RECEIPT_LABELS;
  return RECEIPT_LABELS[key];
}

function findLabels(text: string): LabelAt[] {
  const labels: LabelAt[] = [];
  LABEL_PATTERN.lastIndex = 0;
  for (let match = LABEL_PATTERN.exec(text); match !== null; match = LABEL_PATTERN.exec(text)) {
    const labelAt = match.index + (match[1] ?? '').length;
    labels.push({ field: fieldForLabel(match[2] ?? ''), labelAt, valueAt: match.index + match[0].length });
  }
  return labels;
}

/** The first word of a value: Appendix B values hold no spaces; unlabelled words after it are not the value. */
function wordValue(text: string, from: number, to: number): string {
  return text.slice(from, to).trim().split(/\s+/, 1)[0] ?? '';
}

export function parseReceiptText(text: string): ParsedReceiptText {
  const result: ParsedReceiptText = { raw: text, recognised: false };
  const labels = findLabels(text);
  if (labels.length === 0) return result;
  result.recognised = true;
  const textIndex = labels.findIndex((label) => label.field === 'text');
  const before = textIndex < 0 ? labels : labels.slice(0, textIndex);
  // The first occurrence of a label wins: a later repeat is more likely noise than a correction.
  before.forEach((label, i) => {
    if (result[label.field] !== undefined) return;
    result[label.field] = wordValue(text, label.valueAt, labels[i + 1]?.labelAt ?? text.length);
  });
  if (textIndex < 0) return result;
  const textLabel = labels[textIndex]!;
  const after = labels.slice(textIndex + 1);
  if (result.stat !== undefined || after.length === 0) {
    result.text = text.slice(textLabel.valueAt);
    return result;
  }
  // Text-first layout: the fields after the text are the SMSC's; the last of each is taken.
  const trailing = new Map<ReceiptField, { label: LabelAt; end: number }>();
  after.forEach((label, i) => {
    if (label.field === 'text' || result[label.field] !== undefined) return;
    trailing.set(label.field, { label, end: after[i + 1]?.labelAt ?? text.length });
  });
  let textEnd = text.length;
  for (const [field, { label, end }] of trailing) {
    result[field] = wordValue(text, label.valueAt, end);
    textEnd = Math.min(textEnd, label.labelAt);
  }
  result.text = text.slice(textLabel.valueAt, textEnd).trimEnd();
  return result;
}

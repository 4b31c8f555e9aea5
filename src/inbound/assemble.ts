/**
 * Joins the stored parts of one concatenated message (TS 23.040 §9.2.3.24.1: same originator,
 * reference and total) into its text. Pure: the caller reads the parts and writes the result.
 *
 * GSM-7 parts are joined as decoded text (each part's septets decode on their own, with the
 * national shift tables its own UDH names). UCS-2 parts are joined as octets and decoded once,
 * so a surrogate pair split between parts (or an SMSC that cut at an odd octet) comes out whole.
 * 8-bit data is shown as upper-case hex of the joined octets. Parts of different codings (never
 * sent by a handset) are decoded per part and joined in part order.
 */
import { decodeUcs2 } from '../sms/index.js';

export type InboundCoding = 'gsm7' | 'ucs2' | 'binary';

export interface StoredPart {
  sequence: number;
  coding: InboundCoding;
  /** 'gsm7': the decoded text; 'ucs2' | 'binary': the user data octets as hex. */
  body: string;
}

export interface AssembledText {
  text: string;
  /** Part numbers 1..total that are not among the parts. */
  missing: number[];
}

export function assembleParts(parts: readonly StoredPart[], total: number): AssembledText {
  const ordered = [...parts].sort((a, b) => a.sequence - b.sequence);
  const missing: number[] = [];
  const present = new Set(ordered.map((part) => part.sequence));
  for (let sequence = 1; sequence <= total; sequence++) if (!present.has(sequence)) missing.push(sequence);
  return { text: joinRuns(ordered), missing };
}

/** Consecutive parts of the same octet coding are decoded together; a gap (missing part) ends a run. */
function joinRuns(ordered: readonly StoredPart[]): string {
  let text = '';
  let run: (StoredPart & { coding: 'ucs2' | 'binary' })[] = [];
  const flush = (): void => {
    const first = run[0];
    if (first === undefined) return;
    text += decodeOctets(first.coding, run.map((part) => part.body).join(''));
    run = [];
  };
  for (const part of ordered) {
    const coding = part.coding;
    if (coding === 'gsm7') {
      flush();
      text += part.body;
      continue;
    }
    const last = run[run.length - 1];
    if (last !== undefined && (last.coding !== coding || last.sequence + 1 !== part.sequence)) flush();
    run.push({ ...part, coding });
  }
  flush();
  return text;
}

/** Joined UCS-2 octets; an odd trailing octet (a part is missing after it) is shown as U+FFFD, never dropped silently. */
export function decodeOctets(coding: 'ucs2' | 'binary', hex: string): string {
  const octets = Buffer.from(hex, 'hex');
  if (coding === 'binary') return octets.toString('hex').toUpperCase();
  const even = octets.length - (octets.length % 2);
  const text = decodeUcs2(octets.subarray(0, even));
  return even === octets.length ? text : `${text}\uFFFD`;
}

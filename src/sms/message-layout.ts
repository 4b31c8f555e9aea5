/**
 * Chooses how a (replaced) text is sent: GSM-7 with the default tables, GSM-7 with national
 * shift tables when the caller enabled them, or UCS-2; and counts its parts by the same greedy
 * split planMessage performs, without building the segments.
 *
 * Split rule (TS 23.040 §9.2.3.24.1 leaves it to the sender): fill each part up to its capacity;
 * an ESC + code pair or a UTF-16 surrogate pair that would straddle a boundary moves whole to the
 * next part, so that part carries one unit less.
 */
import { DEFAULT_GSM7_CHARSET, gsm7Charset, type Gsm7Charset } from './gsm7-charset.js';
import { NATIONAL_LANGUAGE_TABLES, type NationalLanguage } from './national-languages.js';
import { IE_OCTETS, gsm7SeptetCapacity, ucs2UnitCapacity, udhOctetsFor } from './user-data-capacity.js';

export type Encoding = 'GSM-7' | 'UCS-2';

export interface SmsOptions {
  /** National language shift tables (TS 23.038 Annex A) the sender may use; none by default. */
  nationalLanguages?: readonly NationalLanguage[];
  /**
   * Size of the concatenation reference the parts will carry (8 by default, as the specification's
   * 153/67 assume). A 16-bit reference takes one more UDH octet: 152 / 66 units per part.
   */
  concatReferenceBits?: 8 | 16;
}

export interface MessageLayout {
  encoding: Encoding;
  /** Set for GSM-7; the tables the text is encoded with. */
  charset: Gsm7Charset | null;
  singleShift?: NationalLanguage;
  lockingShift?: NationalLanguage;
  /** Units that fit when the whole text is one part (no concatenation IE). */
  singleCapacity: number;
  /** Units per part when the text needs several parts. */
  multiCapacity: number;
}

export interface PartCount {
  units: number;
  parts: number;
}

function concatIeOctets(options: SmsOptions | undefined): number {
  return options?.concatReferenceBits === 16 ? IE_OCTETS.concat16 : IE_OCTETS.concat8;
}

/** Units and parts of `text` in GSM-7 with a charset encode table, or null when a character is not encodable. */
export function countGsm7(text: string, encode: Int16Array, singleCapacity: number, multiCapacity: number): PartCount | null {
  let units = 0;
  let parts = 1;
  let partUnits = 0;
  for (let i = 0; i < text.length; i++) {
    const entry = encode[text.charCodeAt(i)] as number;
    if (entry < 0) return null;
    const width = 1 + (entry >> 7);
    units += width;
    if (partUnits + width > multiCapacity) {
      parts++;
      partUnits = width;
    } else {
      partUnits += width;
    }
  }
  return { units, parts: units <= singleCapacity ? 1 : parts };
}

function isSurrogatePairAt(text: string, i: number): boolean {
  const high = text.charCodeAt(i);
  if (high < 0xd800 || high > 0xdbff) return false;
  const low = text.charCodeAt(i + 1);
  return low >= 0xdc00 && low <= 0xdfff;
}

/** Units (UTF-16 code units) and parts of `text` in UCS-2; a surrogate pair never straddles parts. */
export function countUcs2(text: string, singleCapacity: number, multiCapacity: number): PartCount {
  const units = text.length;
  if (units <= singleCapacity) return { units, parts: 1 };
  let parts = 1;
  let partUnits = 0;
  for (let i = 0; i < units; i++) {
    let width = 1;
    if (isSurrogatePairAt(text, i)) {
      width = 2;
      i++;
    }
    if (partUnits + width > multiCapacity) {
      parts++;
      partUnits = width;
    } else {
      partUnits += width;
    }
  }
  return { units, parts };
}

/** Splits `text` into segments by the same rule as countGsm7 / countUcs2 (layout must fit the text). */
export function splitSegments(text: string, layout: MessageLayout, units: number): string[] {
  if (units <= layout.singleCapacity) return [text];
  const encode = layout.charset?.encode;
  const segments: string[] = [];
  let start = 0;
  let partUnits = 0;
  for (let i = 0; i < text.length; i++) {
    let width = 1;
    let length = 1;
    if (encode !== undefined) {
      width = 1 + ((encode[text.charCodeAt(i)] as number) >> 7);
    } else if (isSurrogatePairAt(text, i)) {
      width = 2;
      length = 2;
    }
    if (partUnits + width > layout.multiCapacity) {
      segments.push(text.slice(start, i));
      start = i;
      partUnits = width;
    } else {
      partUnits += width;
    }
    i += length - 1;
  }
  segments.push(text.slice(start));
  return segments;
}

const DEFAULT_GSM7_LAYOUTS = {
  8: gsm7Layout(DEFAULT_GSM7_CHARSET, undefined, undefined, IE_OCTETS.concat8),
  16: gsm7Layout(DEFAULT_GSM7_CHARSET, undefined, undefined, IE_OCTETS.concat16),
} as const;
const UCS2_LAYOUTS = {
  8: ucs2Layout(IE_OCTETS.concat8),
  16: ucs2Layout(IE_OCTETS.concat16),
} as const;

function gsm7Layout(charset: Gsm7Charset, single: NationalLanguage | undefined, locking: NationalLanguage | undefined, concatOctets: number): MessageLayout {
  const shiftOctets = (single === undefined ? 0 : IE_OCTETS.nationalShift) + (locking === undefined ? 0 : IE_OCTETS.nationalShift);
  const layout: MessageLayout = {
    encoding: 'GSM-7',
    charset,
    singleCapacity: gsm7SeptetCapacity(udhOctetsFor(shiftOctets)),
    multiCapacity: gsm7SeptetCapacity(udhOctetsFor(concatOctets + shiftOctets)),
  };
  if (single !== undefined) layout.singleShift = single;
  if (locking !== undefined) layout.lockingShift = locking;
  return layout;
}

function ucs2Layout(concatOctets: number): MessageLayout {
  return { encoding: 'UCS-2', charset: null, singleCapacity: ucs2UnitCapacity(0), multiCapacity: ucs2UnitCapacity(udhOctetsFor(concatOctets)) };
}

/** Every national shift combination the options allow, fewest IEs first (a tie keeps the earlier). */
function nationalLayouts(languages: readonly NationalLanguage[], concatOctets: number): MessageLayout[] {
  const lockings: Array<NationalLanguage | undefined> = [undefined, ...languages.filter((l) => NATIONAL_LANGUAGE_TABLES[l].locking !== undefined)];
  const singles: Array<NationalLanguage | undefined> = [undefined, ...languages];
  const layouts: MessageLayout[] = [];
  for (const locking of lockings) {
    for (const single of singles) {
      if (locking === undefined && single === undefined) continue;
      layouts.push(gsm7Layout(gsm7Charset({ locking, single }), single, locking, concatOctets));
    }
  }
  return layouts.sort((a, b) => shiftCount(a) - shiftCount(b));
}

function shiftCount(layout: MessageLayout): number {
  return (layout.singleShift === undefined ? 0 : 1) + (layout.lockingShift === undefined ? 0 : 1);
}

/**
 * The layout a text is sent with, and its count. Default GSM-7 whenever every character is in the
 * default alphabet or its extension; otherwise the enabled national shift combination with the
 * fewest parts, but only when that is strictly fewer parts than UCS-2 (every handset shows UCS-2,
 * not every handset has Annex A tables); otherwise UCS-2.
 */
export function chooseLayout(text: string, options?: SmsOptions): { layout: MessageLayout; count: PartCount } {
  const referenceBits = options?.concatReferenceBits === 16 ? 16 : 8;
  const gsm7 = DEFAULT_GSM7_LAYOUTS[referenceBits];
  const gsm7Count = countGsm7(text, DEFAULT_GSM7_CHARSET.encode, gsm7.singleCapacity, gsm7.multiCapacity);
  if (gsm7Count !== null) return { layout: gsm7, count: gsm7Count };
  const ucs2 = UCS2_LAYOUTS[referenceBits];
  let best = { layout: ucs2, count: countUcs2(text, ucs2.singleCapacity, ucs2.multiCapacity) };
  const languages = options?.nationalLanguages ?? [];
  if (languages.length === 0) return best;
  for (const layout of nationalLayouts(languages, concatIeOctets(options))) {
    const count = countGsm7(text, (layout.charset as Gsm7Charset).encode, layout.singleCapacity, layout.multiCapacity);
    if (count !== null && count.parts < best.count.parts) best = { layout, count };
  }
  return best;
}

/**
 * How much text fits in one SMS, computed from the UDH length rather than remembered: TP-User-Data
 * holds at most 140 octets (3GPP TS 23.040 §9.2.3.16); a UDH takes its octets plus the UDHL octet,
 * and GSM-7 text after it starts at the next septet boundary (TS 23.040 §9.2.3.24, fill bits).
 */

/** TS 23.040 §9.2.3.16: maximum TP-User-Data length in octets. */
export const USER_DATA_MAX_OCTETS = 140;

/** Information element sizes in octets including IEI and IEDL (TS 23.040 §9.2.3.24.1, .8, .15, .16). */
export const IE_OCTETS = {
  concat8: 5,
  concat16: 6,
  nationalShift: 3,
} as const;

/** The interface specification's part sizes (8-bit concatenation reference, no national shift). */
export const SEGMENT_LIMITS = {
  gsm7: { single: 160, multi: 153 },
  ucs2: { single: 70, multi: 67 },
} as const;

/** Whole UDH size in octets (UDHL octet included) for information elements totalling `ieOctets`. */
export function udhOctetsFor(ieOctets: number): number {
  return ieOctets === 0 ? 0 : ieOctets + 1;
}

/** Septets of GSM-7 text that fit after a UDH of `udhOctets` octets (fill bits included). */
export function gsm7SeptetCapacity(udhOctets: number): number {
  return Math.floor((USER_DATA_MAX_OCTETS - udhOctets) * 8 / 7);
}

/** UTF-16 code units of UCS-2 text that fit after a UDH of `udhOctets` octets. */
export function ucs2UnitCapacity(udhOctets: number): number {
  return Math.floor((USER_DATA_MAX_OCTETS - udhOctets) / 2);
}

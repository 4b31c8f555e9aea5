/**
 * Recipient number validation and normalisation (SPEC "Recipient": 1 to 20 characters, digits
 * with an optional leading '+'; Irish numbers stored as 353..., UK numbers as 44..., other digits
 * unchanged; no full E.164 validation). The rules, in the order they apply:
 *
 * 1. Validate the raw value: 1..20 characters, /^\+?[0-9]+$/ (no spaces, brackets, hyphens).
 * 2. Remove a leading '+', then one leading '00' international prefix.
 * 3. Irish national: leading '0' and 10 digits in all -> '353' + the digits after the 0.
 * 4. UK mobile national: leading '07' and 11 digits in all -> '44' + the digits after the 0.
 * 5. A stray national 0 after the country code: '3530...' -> '353...', '440...' -> '44...'.
 * 6. Anything else is returned unchanged; an empty result (the value was only '00') is invalid.
 */
export type MsisdnResult = { ok: true; msisdn: string } | { ok: false; reason: string };

export const MSISDN_MAX_CHARACTERS = 20;

const MSISDN_SHAPE = /^\+?[0-9]+$/;

/** National-to-international rules as data: [national prefix, total digits, country code]. */
const NATIONAL_FORMS: ReadonlyArray<{ prefix: string; digits: number; countryCode: string }> = [
  { prefix: '0', digits: 10, countryCode: '353' }, // Ireland: 08x xxx xxxx
  { prefix: '07', digits: 11, countryCode: '44' }, // UK mobiles: 07xxx xxxxxx
];

/** Country codes whose numbers are written with a national trunk 0 that callers leave in by mistake. */
const TRUNK_ZERO_COUNTRY_CODES: readonly string[] = ['353', '44'];

export function normalizeMsisdn(raw: string): MsisdnResult {
  if (raw.length === 0) return { ok: false, reason: 'msisdn is empty' };
  if (raw.length > MSISDN_MAX_CHARACTERS) return { ok: false, reason: `msisdn is longer than ${MSISDN_MAX_CHARACTERS} characters` };
  if (!MSISDN_SHAPE.test(raw)) return { ok: false, reason: "msisdn must be digits with an optional leading '+'" };

  let digits = raw.startsWith('+') ? raw.slice(1) : raw;
  if (digits.startsWith('00')) digits = digits.slice(2);
  if (digits.length === 0) return { ok: false, reason: 'msisdn has no digits after the international prefix' };

  for (const form of NATIONAL_FORMS) {
    if (digits.length === form.digits && digits.startsWith(form.prefix)) {
      return { ok: true, msisdn: form.countryCode + digits.slice(1) };
    }
  }
  for (const countryCode of TRUNK_ZERO_COUNTRY_CODES) {
    if (digits.startsWith(`${countryCode}0`)) {
      return { ok: true, msisdn: countryCode + digits.slice(countryCode.length + 1) };
    }
  }
  return { ok: true, msisdn: digits };
}

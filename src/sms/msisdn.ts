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
import { NUMBERING_PLANS, type NumberingPlan } from './numbering.js';

export type MsisdnResult = { ok: true; msisdn: string } | { ok: false; reason: string };

export const MSISDN_MAX_CHARACTERS = 20;

const MSISDN_SHAPE = /^\+?[0-9]+$/;

/**
 * Steps 3-5 follow the numbering plan (numbering.ts, config `numbering.country`); the default is
 * Ireland's with UK mobiles, exactly the rules listed above.
 */
export function normalizeMsisdn(raw: string, plan: NumberingPlan = NUMBERING_PLANS.IE): MsisdnResult {
  if (raw.length === 0) return { ok: false, reason: 'msisdn is empty' };
  if (raw.length > MSISDN_MAX_CHARACTERS) return { ok: false, reason: `msisdn is longer than ${MSISDN_MAX_CHARACTERS} characters` };
  if (!MSISDN_SHAPE.test(raw)) return { ok: false, reason: "msisdn must be digits with an optional leading '+'" };

  let digits = raw.startsWith('+') ? raw.slice(1) : raw;
  if (digits.startsWith('00')) digits = digits.slice(2);
  if (digits.length === 0) return { ok: false, reason: 'msisdn has no digits after the international prefix' };

  for (const form of plan.nationalForms) {
    if (digits.length === form.digits && digits.startsWith(form.prefix)) {
      return { ok: true, msisdn: form.countryCode + digits.slice(form.dropDigits) };
    }
  }
  for (const countryCode of plan.trunkZeroCountryCodes) {
    if (digits.startsWith(`${countryCode}0`)) {
      return { ok: true, msisdn: countryCode + digits.slice(countryCode.length + 1) };
    }
  }
  return { ok: true, msisdn: digits };
}

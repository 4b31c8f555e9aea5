/**
 * National numbering plans: how a number written the national way becomes the international form
 * smsgate stores (digits, country code first, no '+'). `numbering.country` picks one; the default,
 * IE, is SPEC.md's rule ("Supported Irish formats ... stored as 353...; supported UK numbers are
 * stored as 44..."), so it also knows UK mobiles. The others are for deployments elsewhere: a number
 * in the country's national form (its trunk prefix and total length) gets its country code, and a
 * trunk 0 left in after the country code is dropped. Everything else is left unchanged (SPEC: other
 * digits-only values are accepted unchanged, no full E.164 validation). Sources: ITU-T E.164 country
 * codes; the national plans as published by each regulator (ComReg, Ofcom, ARCEP, BNetzA, CNMC,
 * NANPA), reduced to the prefix and total length of a dialled national number.
 */

/** A national form: `digits` digits in all starting with `prefix`; stored as countryCode + digits after the first `dropDigits`. */
export interface NationalForm {
  prefix: string;
  digits: number;
  dropDigits: number;
  countryCode: string;
}

export interface NumberingPlan {
  /** ISO 3166-1 alpha-2. */
  country: string;
  countryCode: string;
  /** Tried in order; the first whose prefix and length match wins. */
  nationalForms: readonly NationalForm[];
  /** Country codes after which a stray national trunk 0 is dropped ('3530...' -> '353...'). */
  trunkZeroCountryCodes: readonly string[];
}

const trunkZero = (countryCode: string, ...digits: number[]): NationalForm[] =>
  digits.map((total) => ({ prefix: '0', digits: total, dropDigits: 1, countryCode }));

export const NUMBERING_PLANS = {
  // SPEC.md: Irish national 0 + 9 digits, and UK mobiles 07 + 9 digits (11 in all).
  IE: {
    country: 'IE', countryCode: '353',
    nationalForms: [
      { prefix: '0', digits: 10, dropDigits: 1, countryCode: '353' },
      { prefix: '07', digits: 11, dropDigits: 1, countryCode: '44' },
    ],
    trunkZeroCountryCodes: ['353', '44'],
  },
  // Ofcom: 0 + 10 digits (a few areas 0 + 9).
  GB: { country: 'GB', countryCode: '44', nationalForms: trunkZero('44', 11, 10), trunkZeroCountryCodes: ['44'] },
  // ARCEP: 0 + 9 digits.
  FR: { country: 'FR', countryCode: '33', nationalForms: trunkZero('33', 10), trunkZeroCountryCodes: ['33'] },
  // BNetzA: 0 + 10 or 11 digits for mobiles (015x, 016x, 017x); landlines vary, the same two lengths cover most.
  DE: { country: 'DE', countryCode: '49', nationalForms: trunkZero('49', 12, 11), trunkZeroCountryCodes: ['49'] },
  // CNMC: no trunk prefix; 9 digits, mobiles 6xx and 7xx, landlines 8xx and 9xx.
  ES: {
    country: 'ES', countryCode: '34',
    nationalForms: ['6', '7', '8', '9'].map((prefix) => ({ prefix, digits: 9, dropDigits: 0, countryCode: '34' })),
    trunkZeroCountryCodes: [],
  },
  // NANPA: 10 digits, the area code never starts with 0 or 1; 1 + 10 digits is already international.
  US: {
    country: 'US', countryCode: '1',
    nationalForms: ['2', '3', '4', '5', '6', '7', '8', '9'].map((prefix) => ({ prefix, digits: 10, dropDigits: 0, countryCode: '1' })),
    trunkZeroCountryCodes: [],
  },
  // AGCOM: no trunk prefix to drop (the leading 0 of landlines is part of the number); mobiles 3 + 9 or 10 digits.
  IT: {
    country: 'IT', countryCode: '39',
    nationalForms: [{ prefix: '3', digits: 10, dropDigits: 0, countryCode: '39' }, { prefix: '3', digits: 9, dropDigits: 0, countryCode: '39' }],
    trunkZeroCountryCodes: [],
  },
  // ACM: 0 + 9 digits.
  NL: { country: 'NL', countryCode: '31', nationalForms: trunkZero('31', 10), trunkZeroCountryCodes: ['31'] },
} as const satisfies Record<string, NumberingPlan>;

export type NumberingCountry = keyof typeof NUMBERING_PLANS;

export const NUMBERING_COUNTRIES = Object.keys(NUMBERING_PLANS) as NumberingCountry[];

/** SPEC.md's plan: Ireland, with UK mobiles. */
export const DEFAULT_NUMBERING_COUNTRY: NumberingCountry = 'IE';

export function numberingPlanFor(country: NumberingCountry = DEFAULT_NUMBERING_COUNTRY): NumberingPlan {
  return NUMBERING_PLANS[country];
}

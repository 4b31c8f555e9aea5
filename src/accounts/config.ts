/**
 * The config keys of message credits: `pricing` (what one part to a destination costs) and
 * `credits` (the low-balance threshold). src/config validates the file with these schemas, handed in
 * by the composition root (src/gateway/config.ts); this module owns their meaning and defaults.
 */
import { nonNegativeInt, section, type ConfigProblem } from '../config/index.js';
import type { PricingRule } from './credits.js';

/** The `credits` section. */
export interface CreditsConfig {
  /**
   * When a client's available credits fall below this, the gateway logs it once and the status
   * page marks the client. Left out: no threshold.
   */
  lowThreshold?: number;
}

/**
 * `pricing`: an array of rules; left out (or empty), every part costs DEFAULT_CREDITS_PER_PART
 * (src/accounts/credits.ts), as does a part to a number no rule matches.
 */
export const pricingSchema = {
  type: 'array',
  default: [],
  items: {
    type: 'object',
    additionalProperties: false,
    required: ['prefix', 'creditsPerPart'],
    properties: {
      // Matched like routes[].prefix against the normalised msisdn (digits only); "" matches every number.
      prefix: { type: 'string', pattern: '^[0-9]{0,20}$' },
      // Credits are whole numbers: a ledger of integers never rounds. 0 makes a destination free.
      creditsPerPart: nonNegativeInt,
    },
  },
} as const;

export const creditsSchema = section({
  lowThreshold: nonNegativeInt,
});

/**
 * Two rules with one prefix would make the price depend on their order: refused, naming the
 * second, as a duplicate route prefix is.
 */
export function pricingProblem(pricing: readonly PricingRule[]): ConfigProblem | null {
  const seen = new Set<string>();
  for (const [index, rule] of pricing.entries()) {
    if (seen.has(rule.prefix)) return { key: `pricing[${index}].prefix`, what: `duplicate pricing prefix "${rule.prefix}"` };
    seen.add(rule.prefix);
  }
  return null;
}

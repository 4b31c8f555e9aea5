/**
 * What a campaign reserves when it is accepted and what processing gives back, in credits. Pure:
 * the service and the processor call these, and the stores only write the result through the
 * ledger writers (src/store/sqlite/credit-ledger.ts, src/store/postgres/credit-ledger.ts).
 *
 * A part to a number costs creditsPerPart(pricing, number) (src/accounts/credits.ts); a
 * campaign's parts per message are the SMS core's analyzeText(text).parts, the one count the
 * processor stores in campaigns.parts_per_message and the engine splits the text by.
 */
import { creditsPerPart, releaseOf, type CreditMovement, type PricingRule } from '../accounts/credits.js';
import { analyzeText, normalizeMsisdn, type NumberingPlan } from '../sms/index.js';

/** How many parts the campaign's text is sent in (campaigns.parts_per_message). */
export function partsPerMessage(text: string): number {
  return analyzeText(text).parts;
}

/**
 * The price of one part to a requested number, as the processor will store it: the number
 * normalised by the same numbering plan first (a national 087... is priced as 35387...). A number
 * that cannot be normalised is skipped by processing, never sent, and costs nothing.
 */
export function requestedNumberPrice(pricing: readonly PricingRule[], numbering: NumberingPlan, msisdn: string): number {
  const normalized = normalizeMsisdn(msisdn, numbering);
  return normalized.ok ? creditsPerPart(pricing, normalized.msisdn) : 0;
}

/**
 * What processing settles once it knows the recipients it keeps (the processor writes the
 * movements with markReady, in the transaction that makes the campaign ready):
 * - the reservation minus what the kept recipients can cost (parts x their price) is released:
 *   duplicates and skipped recipients (not permitted, opted out, invalid) will never use it;
 * - if pricing was raised between acceptance and processing, the kept recipients may cost more
 *   than was reserved: the difference is reserved now, so every part the engine charges is
 *   covered by the reservation (available may then go below zero, an operator's price change
 *   being the one way it can).
 * `reserved` null: the campaign was accepted for an unlimited client; nothing to settle.
 */
export function settleAtProcessing(
  clientId: number, campaignId: string, reserved: number | null, parts: number, keptPrices: readonly number[],
): CreditMovement[] {
  if (reserved === null) return [];
  let perMessage = 0;
  for (const price of keptPrices) perMessage += price;
  const cost = parts * perMessage;
  if (cost > reserved) {
    return [{ clientId, kind: 'reserve', credits: cost - reserved, campaignId, note: 'pricing raised after acceptance' }];
  }
  return releaseOf(clientId, campaignId, reserved - cost);
}

/**
 * The operator's changes to a balance (`smsgate credits add|set`) as ledger movements. Pure: the
 * SQLite and the PostgreSQL credit stores both build their rows here and write them through their
 * ledger writer, so the kind rule of src/accounts/credits.ts is applied once.
 */
import type { CreditMovement } from './credits.js';

/** `credits add`: more credits are a `top-up`, fewer a `correction`; 0 moves nothing. */
export function adjustmentOf(clientId: number, credits: number, note: string | null): CreditMovement[] {
  if (credits === 0) return [];
  return [{ clientId, kind: credits > 0 ? 'top-up' : 'correction', credits, campaignId: null, note }];
}

/** `credits set`: the `correction` that takes the balance from `balance` to `target`; none when they are equal. */
export function correctionTo(clientId: number, balance: number, target: number): CreditMovement[] {
  const credits = target - balance;
  return credits === 0 ? [] : [{ clientId, kind: 'correction', credits, campaignId: null, note: `set to ${target}` }];
}

/**
 * Whether a client's credits are low, and which clients crossed `credits.lowThreshold` since the
 * last check. Pure: the status facts' "low" marker and the gateway's periodic check
 * (src/admin/low-credits-watch.ts, on either store) both decide here, once.
 *
 * A client is low when it has a balance (not unlimited) and its available credits are below the
 * threshold. The crossing is remembered in client_credits.low_since (set when the client went
 * low, cleared when it came back to the threshold or above), so the warning is logged once per
 * crossing across restarts and across a cluster's nodes: the store writes the mark and this
 * decision in one transaction, and only the node whose transaction changed the mark logs.
 */
import type { CreditAccount } from './credits.js';

/** A client's account as the status facts show it: its credits and its send rate. */
export interface ClientCredits extends CreditAccount {
  /** client_send_rates.parts_per_second; null: no per-client cap. */
  partsPerSecond: number | null;
}

/** A client with a balance as the check reads it under its transaction. */
export interface LowCreditsMark {
  clientId: number;
  client: string;
  unlimited: boolean;
  available: number;
  /** When the client was last found low (ms since the epoch); null: not marked low. */
  lowSince: number | null;
}

/** A client whose low mark the check changes: `low` true when it fell below the threshold. */
export interface LowCreditsChange {
  clientId: number;
  client: string;
  available: number;
  low: boolean;
}

/** `threshold` undefined: the check is off and no client is low. */
export function isLow(account: Pick<CreditAccount, 'unlimited' | 'available'>, threshold: number | undefined): boolean {
  return threshold !== undefined && !account.unlimited && account.available < threshold;
}

/** The clients whose stored mark disagrees with what they are now, in the order given. */
export function lowCreditsChanges(marks: readonly LowCreditsMark[], threshold: number): LowCreditsChange[] {
  return marks
    .filter((m) => isLow(m, threshold) !== (m.lowSince !== null))
    .map((m) => ({ clientId: m.clientId, client: m.client, available: m.available, low: m.lowSince === null }));
}

/**
 * Message credits: what a part costs and how a change moves a client's sums. Pure: every store
 * (SQLite, PostgreSQL) and every entry point (the API's reservation, the engine's charges and
 * releases, `smsgate credits`) builds its ledger rows and sum changes here, once.
 *
 * The ledger's rule (the accounts contract): `top-up`, `correction` and `charge` rows change the
 * balance by `credits` (a charge is negative); `reserve` and `release` rows change what is
 * reserved by `credits` (a release is negative); available = balance - reserved. Charging a
 * reserved part is a release and a charge of the same amount, so each kind moves one sum only.
 */
/**
 * The kinds of ledger row (credit_ledger.kind). Defined here, with the rule of what each moves, and
 * used by the store's row type: the store depends on accounts, never the other way.
 */
export type CreditKind = 'top-up' | 'reserve' | 'release' | 'charge' | 'correction';

/** One `pricing` entry of the config: parts to numbers starting with `prefix` cost `creditsPerPart`. */
export interface PricingRule {
  prefix: string;
  creditsPerPart: number;
}

/** A part to a destination no pricing rule matches. */
export const DEFAULT_CREDITS_PER_PART = 1;

/** One ledger row to write (its time is the writer's). */
export interface CreditMovement {
  clientId: number;
  kind: CreditKind;
  /** Signed, by the ledger's rule above. Never 0 (a zero change writes no row). */
  credits: number;
  campaignId: string | null;
  note: string | null;
}

/** What a batch of movements does to one client's sums. */
export interface CreditSums {
  clientId: number;
  balance: number;
  reserved: number;
}

/** A client's account as `credits show` and the status page show it. */
export interface CreditAccount {
  clientId: number;
  client: string;
  unlimited: boolean;
  balance: number;
  reserved: number;
  available: number;
}

/** The result of reserving a campaign's most it can cost, atomically with storing it. */
export type Reservation =
  /** The client has no balance: nothing reserved, nothing will be charged. */
  | { outcome: 'unlimited' }
  | { outcome: 'reserved'; credits: number }
  /** Too little available: nothing reserved, and the caller stores nothing. */
  | { outcome: 'short'; needed: number; available: number };

/**
 * Whether a campaign costing `credits` may be stored: `account` is the client's client_credits row
 * read under the transaction that stores the campaign (undefined: the client has no balance).
 */
export function decideReservation(account: { unlimited: number; available: number } | undefined, credits: number): Reservation {
  if (account === undefined || account.unlimited === 1) return { outcome: 'unlimited' };
  if (account.available < credits) return { outcome: 'short', needed: credits, available: account.available };
  return { outcome: 'reserved', credits };
}

/** The price of one part to `msisdn` (digits, a leading + ignored): the longest matching prefix wins. */
export function creditsPerPart(pricing: readonly PricingRule[], msisdn: string): number {
  const digits = msisdn.startsWith('+') ? msisdn.slice(1) : msisdn;
  let best: PricingRule | undefined;
  for (const rule of pricing) {
    if (digits.startsWith(rule.prefix) && (best === undefined || rule.prefix.length > best.prefix.length)) best = rule;
  }
  return best?.creditsPerPart ?? DEFAULT_CREDITS_PER_PART;
}

/** The sum a kind moves. */
export function sumMovedBy(kind: CreditKind): 'balance' | 'reserved' {
  switch (kind) {
    case 'top-up':
    case 'correction':
    case 'charge':
      return 'balance';
    case 'reserve':
    case 'release':
      return 'reserved';
  }
}

/** A reserved part (or parts) the carrier accepted: its reservation consumed, its price charged. */
export function chargeOf(clientId: number, campaignId: string | null, credits: number): CreditMovement[] {
  if (credits === 0) return [];
  return [
    { clientId, kind: 'release', credits: -credits, campaignId, note: null },
    { clientId, kind: 'charge', credits: -credits, campaignId, note: null },
  ];
}

/** Reserved credits that will never be used (a skipped recipient, a part that ended unaccepted). */
export function releaseOf(clientId: number, campaignId: string | null, credits: number): CreditMovement[] {
  return credits === 0 ? [] : [{ clientId, kind: 'release', credits: -credits, campaignId, note: null }];
}

/**
 * Movements of one batch merged into one row per (client, campaign, kind, note), zero sums
 * dropped, in first-seen order: a batch of 500 accepted parts of one campaign is one release and
 * one charge row, not a thousand.
 */
export function mergeMovements(movements: readonly CreditMovement[]): CreditMovement[] {
  const merged = new Map<string, CreditMovement>();
  for (const m of movements) {
    const key = `${m.clientId}\u0000${m.campaignId ?? ''}\u0000${m.kind}\u0000${m.note ?? ''}`;
    const seen = merged.get(key);
    if (seen === undefined) merged.set(key, { ...m });
    else seen.credits += m.credits;
  }
  return [...merged.values()].filter((m) => m.credits !== 0);
}

/** Each client's sum changes from a batch of movements, in first-seen client order. */
export function sumsOf(movements: readonly CreditMovement[]): CreditSums[] {
  const sums = new Map<number, CreditSums>();
  for (const m of movements) {
    let s = sums.get(m.clientId);
    if (s === undefined) sums.set(m.clientId, (s = { clientId: m.clientId, balance: 0, reserved: 0 }));
    s[sumMovedBy(m.kind)] += m.credits;
  }
  return [...sums.values()];
}

/** One message's ask in a batch reserved in one transaction: its client, its campaign, its most it can cost. */
export interface ReservationAsk {
  clientId: number;
  campaignId: string;
  credits: number;
}

/** An ask as decided in its batch, with the ledger rows it writes (none unless reserved). */
export interface OrderedReservation {
  reservation: Reservation;
  /** campaigns.credits_reserved: null when the client is unlimited (never charged). */
  creditsReserved: number | null;
  movements: CreditMovement[];
}

/**
 * decideReservation for a batch of asks in order, each against what the asks before it left
 * available: `accounts` holds each client's client_credits row as read (and on PostgreSQL locked)
 * under the batch's transaction, undefined for a client with none. A short ask reserves nothing
 * and leaves the rest to the later ones, so the batch never reserves past what was available.
 */
export function reserveInOrder(
  accounts: ReadonlyMap<number, { unlimited: number; available: number } | undefined>, asks: readonly ReservationAsk[],
): OrderedReservation[] {
  const available = new Map<number, number>();
  return asks.map((ask) => {
    const account = accounts.get(ask.clientId);
    const left = account === undefined ? undefined : { unlimited: account.unlimited, available: available.get(ask.clientId) ?? account.available };
    const reservation = decideReservation(left, ask.credits);
    if (reservation.outcome !== 'reserved' || left === undefined) return { reservation, creditsReserved: null, movements: [] };
    available.set(ask.clientId, left.available - ask.credits);
    const movements: CreditMovement[] = ask.credits === 0 ? [] : [{ clientId: ask.clientId, kind: 'reserve', credits: ask.credits, campaignId: ask.campaignId, note: null }];
    return { reservation, creditsReserved: ask.credits, movements };
  });
}

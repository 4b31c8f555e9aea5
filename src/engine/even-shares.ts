/**
 * Rounds of even shares, the one rule behind both fair loops of the engine: the
 * scheduler's recipients per due campaign and a lane's parts per campaign with queued parts. Each
 * round splits what is left of the budget evenly over the candidates still open (at least 1 each);
 * a candidate that used its whole share stays open for the next round, one that used less (it has
 * nothing more now) drops out, so what a small campaign leaves unused goes to the others.
 *
 * A generator, so the synchronous SQLite loops and the awaiting PostgreSQL ones drive the same
 * rounds: it yields each candidate's room and is told (next(used)) how much of it was used.
 */
export interface Share<T> {
  candidate: T;
  room: number;
  /** True in the first round (the claim's cursor follows the campaigns served there). */
  firstRound: boolean;
}

export function* evenShares<T>(candidates: readonly T[], budget: number): Generator<Share<T>, void, number> {
  let left = budget;
  let open = candidates;
  let firstRound = true;
  while (left > 0 && open.length > 0) {
    const share = Math.max(1, Math.floor(left / open.length));
    const filled: T[] = [];
    for (const candidate of open) {
      const room = Math.min(share, left);
      if (room <= 0) break;
      const used = yield { candidate, room, firstRound };
      left -= used;
      if (used === room) filled.push(candidate);
    }
    open = filled;
    firstRound = false;
  }
}

/** What one candidate got from fillEvenShares. */
export interface Filled<T> {
  candidate: T;
  /** How much of the budget it takes (at most its supply). */
  take: number;
  /** It got some in the first round (a claim's cursor follows the last such campaign). */
  servedFirstRound: boolean;
}

/**
 * A cap several candidates share (a rated client's allowance over its campaigns): `groupOf` names a
 * candidate's group, undefined for one no cap applies to; `caps` is each group's most in all.
 */
export interface GroupCaps<T, G> {
  groupOf: (candidate: T) => G | undefined;
  caps: ReadonlyMap<G, number>;
}

/**
 * The rounds of evenShares run to the end against known supplies (what each candidate can give at
 * most, read before the plan): one entry per candidate, in the candidates' order. With `grouped`,
 * the candidates of a group take at most its cap together; a candidate its group's cap stops uses
 * less than its room and drops out like one with nothing more, so what it leaves goes to the others.
 */
export function fillEvenShares<T, G = never>(candidates: readonly T[], supplyOf: (candidate: T) => number, budget: number, grouped?: GroupCaps<T, G>): Filled<T>[] {
  const filled = candidates.map((candidate) => ({ candidate, take: 0, servedFirstRound: false }));
  const byCandidate = new Map<T, Filled<T>>(filled.map((f) => [f.candidate, f]));
  const capLeft = new Map<G, number>(grouped?.caps ?? []);
  const shares = evenShares(candidates, budget);
  for (let share = shares.next(); share.done !== true; ) {
    const entry = byCandidate.get(share.value.candidate) as Filled<T>;
    const group = grouped?.groupOf(entry.candidate);
    const groupLeft = group === undefined ? Infinity : capLeft.get(group) ?? Infinity;
    const used = Math.max(0, Math.min(share.value.room, supplyOf(entry.candidate) - entry.take, groupLeft));
    if (group !== undefined && capLeft.has(group)) capLeft.set(group, groupLeft - used);
    entry.take += used;
    if (share.value.firstRound && used > 0) entry.servedFirstRound = true;
    share = shares.next(used);
  }
  return filled;
}

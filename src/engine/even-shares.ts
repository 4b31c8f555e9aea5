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
 * The rounds of evenShares run to the end against known supplies (what each candidate can give at
 * most, read before the plan): one entry per candidate, in the candidates' order.
 */
export function fillEvenShares<T>(candidates: readonly T[], supplyOf: (candidate: T) => number, budget: number): Filled<T>[] {
  const filled = candidates.map((candidate) => ({ candidate, take: 0, servedFirstRound: false }));
  const byCandidate = new Map<T, Filled<T>>(filled.map((f) => [f.candidate, f]));
  const shares = evenShares(candidates, budget);
  for (let share = shares.next(); share.done !== true; ) {
    const entry = byCandidate.get(share.value.candidate) as Filled<T>;
    const used = Math.max(0, Math.min(share.value.room, supplyOf(entry.candidate) - entry.take));
    entry.take += used;
    if (share.value.firstRound && used > 0) entry.servedFirstRound = true;
    share = shares.next(used);
  }
  return filled;
}

/**
 * Which endpoints have dead letters waiting for redrive, and when each is probed next (item
 * 7). Pure bookkeeping, time is an input; the sender does the I/O.
 *
 * - A transient dead letter at an endpoint schedules a probe when the endpoint's breaker lets its
 *   trial through, or one window (breakerOpenMs) later if it is not open, unless one is already
 *   scheduled: probes come once per window while the endpoint has any.
 * - A probe that does not bring the endpoint back schedules the next one a window later.
 * - A 2xx from the endpoint redrives its dead letters, at most once per window: an endpoint that
 *   fails one event for ever and accepts others must not re-send that event after every 2xx.
 *   A probe's own 2xx always redrives (probes are a window apart already).
 */
export interface RedriveTarget {
  key: string;
  clientId: number;
  url: string;
}

interface Tracked extends RedriveTarget {
  probeAtMs: number;
}

export class RedriveSchedule {
  private readonly tracked = new Map<string, Tracked>();
  private readonly lastRedriveAtMs = new Map<string, number>();

  constructor(private readonly windowMs: number) {}

  /** The endpoint has (or may have) redrivable dead letters: probe it at probeAtMs unless sooner is scheduled. */
  track(target: RedriveTarget, probeAtMs: number): void {
    const existing = this.tracked.get(target.key);
    if (existing !== undefined && existing.probeAtMs <= probeAtMs) return;
    this.tracked.set(target.key, { ...target, probeAtMs });
  }

  /**
   * A transient dead letter was recorded at nowMs. breakerHalfOpensAtMs: when the endpoint's open
   * breaker lets a trial through (null when it is not open); a probe before then would fail fast.
   */
  deadLetter(target: RedriveTarget, nowMs: number, breakerHalfOpensAtMs: number | null = null): void {
    if (this.tracked.has(target.key)) return;
    this.track(target, Math.min(nowMs + this.windowMs, breakerHalfOpensAtMs ?? Number.POSITIVE_INFINITY));
  }

  has(key: string): boolean {
    return this.tracked.has(key);
  }

  /** The endpoint answered 2xx at nowMs: whether to redrive its dead letters now. */
  shouldRedriveOnAnswer(key: string, nowMs: number): boolean {
    if (!this.tracked.has(key)) return false;
    const last = this.lastRedriveAtMs.get(key);
    return last === undefined || nowMs - last >= this.windowMs;
  }

  /** Its dead letters were re-queued at nowMs: nothing is left to probe for until another dies. */
  redriven(key: string, nowMs: number): void {
    this.tracked.delete(key);
    this.lastRedriveAtMs.set(key, nowMs);
    for (const [k, at] of this.lastRedriveAtMs) if (nowMs - at >= this.windowMs) this.lastRedriveAtMs.delete(k);
  }

  /** It has no redrivable dead letter left (they aged out or were replayed). */
  forget(key: string): void {
    this.tracked.delete(key);
  }

  /** Endpoints whose probe is due at nowMs. */
  dueProbes(nowMs: number): RedriveTarget[] {
    const due: RedriveTarget[] = [];
    for (const t of this.tracked.values()) if (t.probeAtMs <= nowMs) due.push({ key: t.key, clientId: t.clientId, url: t.url });
    return due;
  }

  /** Moves the endpoint's next probe to atMs (after a probe was sent, or while its breaker is open). */
  reschedule(key: string, atMs: number): void {
    const t = this.tracked.get(key);
    if (t !== undefined) t.probeAtMs = atMs;
  }

  /** The soonest probe, or +Infinity when no endpoint is waiting. */
  nextProbeAtMs(): number {
    let next = Number.POSITIVE_INFINITY;
    for (const t of this.tracked.values()) if (t.probeAtMs < next) next = t.probeAtMs;
    return next;
  }

  get size(): number {
    return this.tracked.size;
  }
}

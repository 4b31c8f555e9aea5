/**
 * What the admin needs to know about each transport that the transport itself does not keep:
 * since when it is in its state, how many parts the engine has handed it and not yet got back
 * (its window in use, for a transport without per-link windows), the submit rate over the last
 * RATE_WINDOW_SECONDS (and the last minute, for modems), and what the parts handed to it came to
 * since start (PartCounts). Fed by the observer hooks; read by the status page and /metrics.
 */
import type { PartOutcomeKind } from '../gateway-observer.js';
import type { PartOutcome, TransportState } from '../transports/transport.js';

const RATE_WINDOW_SECONDS = 10;
/** Per-minute rates (modems send a few parts a minute) are taken over the last whole minute. */
const MINUTE_SECONDS = 60;

/**
 * Submit statuses that mean "send slower" (SMPP 3.4 §5.1.3: ESME_RTHROTTLED 0x58, ESME_RMSGQFUL
 * 0x14, the pair the SMPP transport's throttle backs off on): counted as throttled, not failed.
 */
const THROTTLE_STATUSES: ReadonlySet<string> = new Set(['ESME_RTHROTTLED', 'ESME_RMSGQFUL']);

/** Parts handed to a transport since start, and what they came to. */
export interface PartCounts {
  submitted: number;
  accepted: number;
  /** Temporary failures the peer gave as "slow down". */
  throttled: number;
  /** Permanent failures: the peer refused the part for good. */
  rejected: number;
  /** Other temporary failures (timeouts, links lost, submit errors), and parts the transport could not send (down). */
  failed: number;
}

/** Which PartCounts field one outcome adds to; without the transport's outcome (a submit that threw), by its kind. */
export function countedAs(kind: PartOutcomeKind, outcome: PartOutcome | undefined): Exclude<keyof PartCounts, 'submitted'> {
  if (outcome === undefined) return kind === 'accepted' ? 'accepted' : kind === 'failed-permanent' ? 'rejected' : 'failed';
  switch (outcome.kind) {
    case 'accepted':
      return 'accepted';
    case 'permanent':
      return 'rejected';
    case 'temporary':
      return THROTTLE_STATUSES.has(outcome.status) ? 'throttled' : 'failed';
    case 'not-sent':
      return 'failed';
  }
}

export class TransportActivity {
  private readonly since = new Map<string, { state: TransportState['state']; sinceMs: number }>();
  private readonly inFlight = new Map<string, number>();
  /** Per transport: parts submitted in each of the last RATE_WINDOW_SECONDS whole seconds. */
  private readonly buckets = new Map<string, { second: number; counts: number[] }>();
  private readonly partCounts = new Map<string, PartCounts>();

  constructor(private readonly now: () => number = Date.now) {}

  stateChanged(transport: string, state: TransportState['state'], atMs: number): void {
    if (this.since.get(transport)?.state !== state) this.since.set(transport, { state, sinceMs: atMs });
  }

  /** When the transport entered `state`, if the change was seen; undefined otherwise. */
  sinceMs(transport: string, state: TransportState['state']): number | undefined {
    const entry = this.since.get(transport);
    return entry?.state === state ? entry.sinceMs : undefined;
  }

  submitted(transport: string, parts: number): void {
    this.countsOf(transport).submitted += parts;
    this.inFlight.set(transport, (this.inFlight.get(transport) ?? 0) + parts);
    const bucket = this.bucketFor(transport);
    bucket.counts[bucket.counts.length - 1]! += parts;
  }

  /** One outcome of a part: `detail` is the transport's own outcome, when it gave one. */
  outcome(transport: string, kind: PartOutcomeKind, detail?: PartOutcome): void {
    this.countsOf(transport)[countedAs(kind, detail)] += 1;
  }

  finished(transport: string): void {
    this.inFlight.set(transport, Math.max(0, (this.inFlight.get(transport) ?? 0) - 1));
  }

  partsInFlight(transport: string): number {
    return this.inFlight.get(transport) ?? 0;
  }

  /** A copy of the transport's counts since start (zeros before its first part). */
  counts(transport: string): PartCounts {
    return { ...this.countsOf(transport) };
  }

  /** Parts per second submitted over the last RATE_WINDOW_SECONDS (the current second excluded). */
  ratePerSecond(transport: string): number {
    const done = this.bucketFor(transport).counts.slice(-RATE_WINDOW_SECONDS - 1, -1);
    return done.reduce((sum, n) => sum + n, 0) / done.length;
  }

  /** Parts submitted over the last whole minute (the current second excluded). */
  partsLastMinute(transport: string): number {
    return this.bucketFor(transport).counts.slice(0, -1).reduce((sum, n) => sum + n, 0);
  }

  private countsOf(transport: string): PartCounts {
    let counts = this.partCounts.get(transport);
    if (counts === undefined) {
      counts = { submitted: 0, accepted: 0, throttled: 0, rejected: 0, failed: 0 };
      this.partCounts.set(transport, counts);
    }
    return counts;
  }

  private bucketFor(transport: string): { second: number; counts: number[] } {
    const second = Math.floor(this.now() / 1_000);
    let bucket = this.buckets.get(transport);
    if (bucket === undefined) {
      bucket = { second, counts: new Array<number>(MINUTE_SECONDS + 1).fill(0) };
      this.buckets.set(transport, bucket);
    }
    const shift = Math.min(second - bucket.second, bucket.counts.length);
    if (shift > 0) {
      bucket.counts.splice(0, shift);
      for (let i = 0; i < shift; i++) bucket.counts.push(0);
      bucket.second = second;
    }
    return bucket;
  }
}

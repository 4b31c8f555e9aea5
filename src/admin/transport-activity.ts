/**
 * What the admin needs to know about each transport that the transport itself does not keep:
 * since when it is in its state, how many parts the engine has handed it and not yet got back
 * (its window in use, for a transport without per-link windows), and the submit rate over the
 * last RATE_WINDOW_SECONDS. Fed by the observer hooks; read by the status page and /metrics.
 */
import type { TransportState } from '../transports/transport.js';

const RATE_WINDOW_SECONDS = 10;

export class TransportActivity {
  private readonly since = new Map<string, { state: TransportState['state']; sinceMs: number }>();
  private readonly inFlight = new Map<string, number>();
  /** Per transport: parts submitted in each of the last RATE_WINDOW_SECONDS whole seconds. */
  private readonly buckets = new Map<string, { second: number; counts: number[] }>();

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
    this.inFlight.set(transport, (this.inFlight.get(transport) ?? 0) + parts);
    const bucket = this.bucketFor(transport);
    bucket.counts[bucket.counts.length - 1]! += parts;
  }

  finished(transport: string): void {
    this.inFlight.set(transport, Math.max(0, (this.inFlight.get(transport) ?? 0) - 1));
  }

  partsInFlight(transport: string): number {
    return this.inFlight.get(transport) ?? 0;
  }

  /** Parts per second submitted over the last RATE_WINDOW_SECONDS (the current second excluded). */
  ratePerSecond(transport: string): number {
    const counts = this.bucketFor(transport).counts;
    const done = counts.slice(0, -1);
    return done.reduce((sum, n) => sum + n, 0) / done.length;
  }

  private bucketFor(transport: string): { second: number; counts: number[] } {
    const second = Math.floor(this.now() / 1_000);
    let bucket = this.buckets.get(transport);
    if (bucket === undefined) {
      bucket = { second, counts: new Array<number>(RATE_WINDOW_SECONDS + 1).fill(0) };
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

/**
 * The transports' states as the route planner reads them (TransportCondition): bound, or not since
 * when. A transport's state changes are told (the engine's onState) and its state is also read at
 * each snapshot, so a change between two is never missed for long.
 */
import type { Transport, TransportState } from '../transports/transport.js';
import type { TransportCondition } from './routing.js';

export class TransportConditionTracker {
  private readonly downSince = new Map<string, number>();

  /** `isUp`: bound (by default), or on a cluster also held by a peer. Transports not yet bound count as down since `startMs`. */
  constructor(
    /** The transports running now (read at each snapshot: a reload adds and removes them). */
    private readonly transports: Iterable<Transport>,
    private readonly isUp: (transport: Transport) => boolean,
    startMs: number,
  ) {
    for (const transport of transports) if (!isUp(transport)) this.downSince.set(transport.name, startMs);
  }

  observe(name: string, state: TransportState, atMs: number): void {
    if (state.state === 'bound') this.downSince.delete(name);
    else if (!this.downSince.has(name)) this.downSince.set(name, atMs);
  }

  snapshot(nowMs: number): Map<string, TransportCondition> {
    const conditions = new Map<string, TransportCondition>();
    for (const transport of this.transports) {
      if (this.isUp(transport)) {
        this.downSince.delete(transport.name);
        conditions.set(transport.name, { up: true });
        continue;
      }
      let sinceMs = this.downSince.get(transport.name);
      if (sinceMs === undefined) this.downSince.set(transport.name, (sinceMs = nowMs));
      conditions.set(transport.name, { up: false, sinceMs });
    }
    return conditions;
  }
}

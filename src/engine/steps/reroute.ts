/**
 * Rerouting queued parts (docs/behaviour/routes.md): a part not yet submitted follows its route
 * as it is now. One pass, per batch of queued parts, in one transaction:
 *   read   queued parts with their number and client (readQueuedParts), by id from a cursor;
 *   decide each one's route choice now (planRoute): another transport when the one it is queued
 *          on has been down longer than the route's failoverAfterMs, or when a transport the route
 *          prefers is usable again (parts move back), or when the route table was replaced; a later
 *          due time while the route's window is closed (planReroute);
 *   write  each change guarded on the part still being queued on the transport it was read on
 *          (writeReroute), so a part a lane claimed meanwhile is left alone, and a moved part's
 *          transport column, which receipts are matched on, names where it will be submitted.
 * Which parts a pass reads is decided from the routes and the transports' states alone
 * (planRerouteScan): all queued parts when what the routes would choose has changed since the
 * last complete scan, else only due parts of routes whose window is closed.
 */
import type { StoreMode, StoreResult } from '../store-mode.js';
import { candidatesOf, planRoute, type RouteTable, type TransportConditions } from '../routing.js';
import { windowState } from '../send-window.js';
import type { Routing } from './materialise.js';
import type { PartReroute, QueuedPart, QueuedPartsQuery } from '../../store/dispatch-steps.js';

export type { PartReroute, QueuedPart, QueuedPartsQuery } from '../../store/dispatch-steps.js';

/** The store side of rerouting; both methods run inside the caller's transaction. */
export interface RerouteStepStore<M extends StoreMode> {
  /** Queued parts matching the query, in id order. */
  readQueuedParts(query: QueuedPartsQuery): StoreResult<M, QueuedPart[]>;
  /**
   * Applies each change only while the part is still 'queued' on `from`; returns the changes
   * applied. PostgreSQL: one statement for the batch.
   */
  writeReroute(changes: readonly PartReroute[], nowMs: number): StoreResult<M, PartReroute[]>;
}

/**
 * The changes for a batch of queued parts: a new transport, a later due time, or both.
 * `afterFailure`: the parts were just requeued after a temporary failure on the transport they are
 * queued on, so the route prefers another usable one for the retry (the attempt budget is the
 * engine's, unchanged).
 */
export function planReroute(parts: readonly QueuedPart[], routing: Routing, nowMs: number, afterFailure = false): PartReroute[] {
  const changes: PartReroute[] = [];
  for (const part of parts) {
    const routed = { msisdn: part.msisdn, client: part.client_name, spreadKey: part.recipient_id };
    const choice = planRoute(routing.routes, routed, routing.conditions, nowMs, afterFailure ? part.transport : undefined);
    // No route now (a replaced table, a transport gone): the part stays where it is, as submitted work would.
    if (choice.kind === 'no-route') continue;
    const nextAttemptAt = choice.kind === 'wait' ? Math.max(part.next_attempt_at, choice.untilMs) : part.next_attempt_at;
    if (choice.transport === part.transport && nextAttemptAt === part.next_attempt_at) continue;
    changes.push({ partId: part.id, from: part.transport, to: choice.transport, nextAttemptAt, route: choice.route.label });
  }
  return changes;
}

/** What a reroute pass reads: everything queued (what routes choose changed), due parts on some transports (windows closed), or nothing. */
export type RerouteScan =
  | { kind: 'all' }
  | { kind: 'due'; transports: string[] }
  | { kind: 'none' };

/**
 * What every route would choose now (its usable transports, whether its window is open), as a
 * text: while it stays the same, parts queued under it need no move.
 */
export function routingSignature(table: RouteTable, conditions: TransportConditions, nowMs: number): string {
  return JSON.stringify(table.routes.map((route) => [
    candidatesOf(route, conditions, nowMs).map((t) => t.name),
    route.window === null || windowState(route.window, nowMs).open,
  ]));
}

/**
 * The scan a pass needs: all queued parts when the signature differs from the one the last
 * complete scan ran under (or none ran yet), else the due parts on the transports of routes whose
 * window is closed (parts retried or requeued since), else none.
 */
export function planRerouteScan(routing: Routing, nowMs: number, lastSignature: string | undefined): { scan: RerouteScan; signature: string } {
  const signature = routingSignature(routing.routes, routing.conditions, nowMs);
  if (signature !== lastSignature) return { scan: { kind: 'all' }, signature };
  const closed = routing.routes.routes.filter((route) => route.window !== null && !windowState(route.window, nowMs).open);
  if (closed.length === 0) return { scan: { kind: 'none' }, signature };
  return { scan: { kind: 'due', transports: [...new Set(closed.flatMap((r) => r.transports.map((t) => t.name)))] }, signature };
}

/** The query for parts just requeued after a temporary failure (planReroute with afterFailure). */
export function retriedPartsQuery(partIds: readonly number[]): QueuedPartsQuery {
  return { afterId: 0, limit: partIds.length, transports: null, dueByMs: null, partIds };
}

/** The query of a scan's next batch. */
export function queryOf(scan: Exclude<RerouteScan, { kind: 'none' }>, afterId: number, limit: number, nowMs: number): QueuedPartsQuery {
  return scan.kind === 'all' ? { afterId, limit, transports: null, dueByMs: null } : { afterId, limit, transports: scan.transports, dueByMs: nowMs };
}

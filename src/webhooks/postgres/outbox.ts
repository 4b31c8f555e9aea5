/**
 * The outbox of a cluster node on PostgreSQL: events are leased to this node
 * (claimDueOutboxRows stamps them with its node id), and each result is written only while the row
 * is still leased to the node (recordLeasedAttempts). A node whose leases were taken over (it
 * expired and was reaped, or a lease lapsed and another node claimed the row) has its late results
 * refused: they change nothing, and the node holding the row now sends it, with the same X-Event-Id
 * (at-least-once, SPEC "Events" point 8).
 *
 * The node id is asked for at every claim and write, never kept (src/common/node-id.ts): it changes
 * when a fenced-out node rejoins. While it is null the node is not a member of the cluster (fenced
 * out, rejoining): it claims nothing, and the results it still holds are refused, since the leases
 * they belong to were given up with its old id.
 */
import type { NodeIdSource } from '../../common/node-id.js';
import type { PgWebhookStore } from '../../store/postgres/webhook-store.js';
import type { AttemptRecord, DueOutboxRow, RedriveEndpoint, RedriveFilter } from '../../store/sqlite/webhook-store.js';
import type { ProbeOutcome, ResultsWritten, WebhookOutbox } from '../outbox.js';

export class PgWebhookOutbox implements WebhookOutbox {
  readonly leasesRows = true;
  /** A failover drops connections for seconds: the results are kept and written once it answers again. */
  readonly retriesFailedWrites = true;

  constructor(
    private readonly store: PgWebhookStore,
    private readonly node: NodeIdSource,
  ) {}

  async claimDue(nowMs: number, maxRows: number, leaseMs: number): Promise<DueOutboxRow[]> {
    const nodeId = this.node.nodeId();
    if (nodeId === null || maxRows <= 0) return [];
    return this.store.claimDueOutboxRows(nowMs, maxRows, leaseMs, nodeId);
  }

  async recordAttempts(records: readonly AttemptRecord[]): Promise<ResultsWritten> {
    const nodeId = this.node.nodeId();
    if (nodeId === null) return { refusedIds: records.map((r) => r.id) };
    return { refusedIds: await this.store.recordLeasedAttempts(records, nodeId) };
  }

  assignEventId(id: number): Promise<string> {
    return this.store.assignEventId(id);
  }

  listRedriveEndpoints(cutoffMs: number): Promise<RedriveEndpoint[]> {
    return this.store.listRedriveEndpoints(cutoffMs);
  }

  async requeueProbe(filter: RedriveFilter, nowMs: number, leaseMs: number): Promise<ProbeOutcome> {
    const nodeId = this.node.nodeId();
    // Not a member now: no probe from here; the endpoint stays tracked and is probed a window later.
    if (nodeId === null) return { kind: 'in-flight' };
    const probe = await this.store.claimProbe(filter, nowMs, leaseMs, nodeId);
    return probe.kind === 'claimed' ? { kind: 'requeued', id: probe.row.id, claimed: probe.row } : probe;
  }

  redriveDeadLetters(filter: RedriveFilter, nowMs: number): Promise<number> {
    return this.store.redriveDeadLetters(filter, nowMs);
  }

  async release(ids: readonly number[]): Promise<void> {
    const nodeId = this.node.nodeId();
    if (nodeId !== null) await this.store.releaseLeases(ids, nodeId);
  }
}

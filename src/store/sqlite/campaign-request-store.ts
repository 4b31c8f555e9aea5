/**
 * The recipients of large campaign requests, as JSON slices in campaign_request_chunks (migration
 * 1764600000001). Written by CampaignService.accept a few slices per transaction before the campaign
 * row exists, read back one slice at a time by the CampaignProcessor, deleted once the campaign is
 * ready. Slices whose campaign row never came (a crash or a refused write mid-accept) are orphans and
 * are deleted at the processor's start.
 */
import type { Statement } from 'better-sqlite3';
import type { SqliteDatabase } from './database.js';
import { commitWithoutOwnSync } from './deferred-sync.js';

export class CampaignRequestStore {
  private readonly insertStmt: Statement<[string, number, string]>;
  private readonly sliceStmt: Statement<[string, number], { recipients_json: string }>;
  private readonly countStmt: Statement<[string], { n: number }>;
  private readonly deleteSomeStmt: Statement<[string, string, number]>;
  private readonly deleteOrphansStmt: Statement<[]>;
  private readonly deleteProcessedStmt: Statement<[]>;

  constructor(private readonly db: SqliteDatabase) {
    this.insertStmt = db.prepare('INSERT INTO campaign_request_chunks (campaign_id, seq, recipients_json) VALUES (?, ?, ?)');
    this.sliceStmt = db.prepare('SELECT recipients_json FROM campaign_request_chunks WHERE campaign_id = ? AND seq = ?');
    this.countStmt = db.prepare('SELECT COUNT(*) AS n FROM campaign_request_chunks WHERE campaign_id = ?');
    this.deleteSomeStmt = db.prepare(
      'DELETE FROM campaign_request_chunks WHERE campaign_id = ? AND seq IN (SELECT seq FROM campaign_request_chunks WHERE campaign_id = ? LIMIT ?)',
    );
    this.deleteOrphansStmt = db.prepare('DELETE FROM campaign_request_chunks WHERE campaign_id NOT IN (SELECT id FROM campaigns)');
    this.deleteProcessedStmt = db.prepare(
      "DELETE FROM campaign_request_chunks WHERE campaign_id IN (SELECT id FROM campaigns WHERE state IN ('ready', 'failed'))",
    );
  }

  /**
   * Slices firstSeq, firstSeq + 1, ... in one transaction, committed without an fsync of its own:
   * nothing is acknowledged for them until the campaign row's synchronous=FULL commit, which makes
   * them durable with it (deferred-sync.ts); slices a crash leaves without a campaign row are orphans.
   */
  insertSlices(campaignId: string, firstSeq: number, slicesJson: readonly string[]): void {
    commitWithoutOwnSync(this.db, () => this.db.transaction(() => {
      slicesJson.forEach((json, i) => this.insertStmt.run(campaignId, firstSeq + i, json));
    })());
  }

  sliceCount(campaignId: string): number {
    return this.countStmt.get(campaignId)?.n ?? 0;
  }

  /** The JSON array text of slice `seq`, undefined when there is none. */
  slice(campaignId: string, seq: number): string | undefined {
    return this.sliceStmt.get(campaignId, seq)?.recipients_json;
  }

  /**
   * Deletes up to `maxSlices` of a campaign's slices; returns how many. No fsync of its own
   * (deferred-sync.ts): slices a crash brings back belong to a campaign already processed or never
   * stored, and both kinds are deleted at the next start.
   */
  deleteSlices(campaignId: string, maxSlices: number): number {
    return commitWithoutOwnSync(this.db, () => this.deleteSomeStmt.run(campaignId, campaignId, maxSlices).changes);
  }

  /** Slices of campaigns already processed (their delete failed at the time). */
  deleteProcessed(): number {
    return this.deleteProcessedStmt.run().changes;
  }

  /** Slices of requests that never became a campaign. Call only when no accept is in progress (start-up). */
  deleteOrphans(): number {
    return this.deleteOrphansStmt.run().changes;
  }
}

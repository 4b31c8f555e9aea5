/**
 * CampaignRequestStore (src/store/sqlite/campaign-request-store.ts) on PostgreSQL: the JSON slices of large
 * campaign requests.
 */
import type { CampaignRequestStore } from '../sqlite/campaign-request-store.js';
import type { Async } from '../ports.js';
import { changes, row, type PgPool } from './pool.js';

export class PgCampaignRequestStore implements Async<CampaignRequestStore> {
  constructor(private readonly pool: PgPool) {}

  /** Slices firstSeq, firstSeq + 1, ... in one statement (one transaction). */
  async insertSlices(campaignId: string, firstSeq: number, slicesJson: readonly string[]): Promise<void> {
    if (slicesJson.length === 0) return;
    await changes(this.pool,
      `INSERT INTO campaign_request_chunks (campaign_id, seq, recipients_json)
       SELECT $1::text, $2::bigint + t.i - 1, t.json FROM unnest($3::text[]) WITH ORDINALITY AS t(json, i)`,
      [campaignId, firstSeq, slicesJson]);
  }

  async sliceCount(campaignId: string): Promise<number> {
    return (await row<{ n: number }>(this.pool, 'SELECT COUNT(*) AS n FROM campaign_request_chunks WHERE campaign_id = $1', [campaignId]))?.n ?? 0;
  }

  async slice(campaignId: string, seq: number): Promise<string | undefined> {
    return (await row<{ recipients_json: string }>(this.pool,
      'SELECT recipients_json FROM campaign_request_chunks WHERE campaign_id = $1 AND seq = $2', [campaignId, seq]))?.recipients_json;
  }

  deleteSlices(campaignId: string, maxSlices: number): Promise<number> {
    return changes(this.pool,
      'DELETE FROM campaign_request_chunks WHERE campaign_id = $1 AND seq IN (SELECT seq FROM campaign_request_chunks WHERE campaign_id = $1 LIMIT $2)',
      [campaignId, maxSlices]);
  }

  deleteProcessed(): Promise<number> {
    return changes(this.pool,
      "DELETE FROM campaign_request_chunks WHERE campaign_id IN (SELECT id FROM campaigns WHERE state IN ('ready', 'failed'))");
  }

  /** Slices of requests that never became a campaign. Call only when no accept is in progress on any node. */
  deleteOrphans(): Promise<number> {
    return changes(this.pool, 'DELETE FROM campaign_request_chunks c WHERE NOT EXISTS (SELECT 1 FROM campaigns WHERE id = c.campaign_id)');
  }
}

import { runDdl } from './dialect.js';
/**
 * The recipients of a large Create Campaign Request, stored as JSON in slices of a few thousand
 *. One 60 MiB request_recipients value was stringified, bound and committed in one
 * go, holding the event loop for seconds; slices are written a transaction at a time, yielding in
 * between, and the campaign row that makes them visible is inserted last. Small requests still use
 * campaigns.request_recipients. Rows are deleted once the campaign is processed.
 */
export class CampaignRequestChunks1764600000001 {
    name = 'CampaignRequestChunks1764600000001';
    async up(queryRunner) {
        await runDdl(queryRunner, [`CREATE TABLE campaign_request_chunks (
      campaign_id TEXT NOT NULL,
      seq INTEGER NOT NULL,
      recipients_json TEXT NOT NULL,
      PRIMARY KEY (campaign_id, seq)
    ) WITHOUT ROWID`]);
    }
    async down(queryRunner) {
        await queryRunner.query(`DROP TABLE IF EXISTS campaign_request_chunks`);
    }
}

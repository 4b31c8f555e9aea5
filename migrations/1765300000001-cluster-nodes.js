import { runDdl } from './dialect.js';
/**
 * The nodes of a cluster on PostgreSQL: one row per running `smsgate serve`,
 * heartbeating about once a second and holding a lease of about 5 s. A row is keyed by a fresh id
 * per start (and per rejoin after being fenced), so work stamped with an old id can never be
 * mistaken for the node's current work. Created on SQLite too (the same migrations run on both),
 * where the one `serve` per file never reads it.
 */
export class ClusterNodes1765300000001 {
    name = 'ClusterNodes1765300000001';
    async up(queryRunner) {
        await runDdl(queryRunner, [
            `CREATE TABLE cluster_nodes (
        id TEXT PRIMARY KEY,
        host TEXT NOT NULL,
        pid INTEGER NOT NULL,
        api_port INTEGER,
        started_at INTEGER NOT NULL,
        heartbeat_at INTEGER NOT NULL,
        lease_until INTEGER NOT NULL
      )`,
            `CREATE INDEX cluster_nodes_lease ON cluster_nodes (lease_until)`,
        ]);
    }
    async down(queryRunner) {
        await queryRunner.query(`DROP TABLE IF EXISTS cluster_nodes`);
    }
}

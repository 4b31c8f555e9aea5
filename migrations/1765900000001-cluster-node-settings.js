import { runDdl } from './dialect.js';
/**
 * The settings each node of a cluster runs that must be the cluster's (the SMPP transports'
 * binds, maxPerSecond, window, host, port, systemId: src/cluster/config-agreement.ts), published
 * in its cluster_nodes row as JSON so every node can tell whether it agrees with the others, and
 * say which key differs. NULL for a row written before this column existed (such a node is left
 * out of the comparison). Created on SQLite too, where the one `serve` per file never reads it.
 */
export class ClusterNodeSettings1765900000001 {
    name = 'ClusterNodeSettings1765900000001';
    async up(queryRunner) {
        await runDdl(queryRunner, [`ALTER TABLE cluster_nodes ADD COLUMN settings TEXT`]);
    }
    async down(queryRunner) {
        await queryRunner.query(`ALTER TABLE cluster_nodes DROP COLUMN settings`);
    }
}

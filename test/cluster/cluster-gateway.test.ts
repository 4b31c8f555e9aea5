/**
 * createGateway with `database.url` in this process: a node of a cluster on a real
 * PostgreSQL, with the admin listener on. It joins (its row in cluster_nodes), /ready is 200 and
 * /metrics carries the cluster series (passing `promtool check metrics`), it has no SQLite store,
 * and its stop leaves the cluster.
 */
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { resolveConfigFromObject } from '../../src/gateway/config.js';
import { createGateway } from '../../src/index.js';
import { tempDir, until } from '../e2e/e2e-setup.js';
import { scrape } from '../admin/admin-fixture.js';
import { usePostgresSuite } from '../support/postgres-suite.js';
import { openDatabase } from '../../src/store/sqlite/database.js';

const suite = usePostgresSuite();

describe('createGateway on PostgreSQL', () => {
  it('is a node: joins, is ready, exposes the cluster metrics, has no SQLite store, and leaves on stop', async () => {
    const url = await suite.server().createDatabase();
    const config = resolveConfigFromObject({
      database: { url, keyFile: join(tempDir('cluster-gateway'), 'cluster.key') },
      api: { host: '127.0.0.1', port: 0 },
      admin: { host: '127.0.0.1', port: 0 },
      transports: [{ name: 'sim', type: 'simulator' }],
      routes: [{ prefix: '', transport: 'sim' }],
    }, 'cluster.json');
    const gateway = await createGateway(config);
    let stopped = false;
    suite.afterThisTest(async () => {
      if (!stopped) await gateway.stop();
    });
    await gateway.start();
    const cluster = gateway.cluster!;
    const database = await openDatabase(config.database, { migrate: false });
    if (database.kind !== 'postgres') throw new Error('expected PostgreSQL');
    suite.afterThisTest(() => database.close());
    const nodeRows = async (): Promise<string[]> => (await database.pool.query<{ id: string }>('SELECT id FROM cluster_nodes')).rows.map((r) => r.id);
    expect(await nodeRows()).toEqual([cluster.node.nodeId()]);
    expect(() => gateway.store).toThrow(expect.objectContaining({ code: 'BACKEND_UNSUPPORTED' }));

    const admin = gateway.admin!.address()!;
    const adminUrl = `http://${admin.host}:${admin.port}`;
    const ready = await until(() => fetch(`${adminUrl}/ready`).then(async (r) => ({ status: r.status, body: await r.json() as unknown })), (r) => r.status === 200, 10_000, '/ready 200');
    expect(ready.body).toEqual({
      ready: true, database: 'writable', transportsUp: ['sim'], transportsHeldByPeers: [],
      routes: [{ prefix: '', servable: true, transports: [{ name: 'sim', state: 'bound', up: true }] }], reasons: [],
    });

    const metrics = await until(() => scrape(adminUrl), (m) => (m.series.get('smsgate_cluster_heartbeats_total') ?? 0) >= 2, 10_000, 'two heartbeats counted');
    expect(metrics.series.get('smsgate_cluster_live_nodes')).toBe(1);
    expect(metrics.series.get('smsgate_cluster_slot_session_up')).toBe(1);
    expect(metrics.series.get('smsgate_cluster_heartbeat_failures_total')).toBe(0);
    expect(metrics.series.get('smsgate_cluster_rejoins_total')).toBe(0);
    expect(metrics.series.get('smsgate_cluster_nodes_taken_over_total')).toBe(0);
    expect(metrics.series.get('smsgate_cluster_rows_requeued_total')).toBe(0);
    const promtool = spawnSync('/usr/bin/promtool', ['check', 'metrics'], { input: metrics.text, encoding: 'utf8' });
    expect(`${promtool.stdout}${promtool.stderr}`).toBe('');
    expect(promtool.status).toBe(0);

    await gateway.stop();
    stopped = true;
    expect(await nodeRows()).toEqual([]);
  });
});

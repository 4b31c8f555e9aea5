/**
 * The SMPP server on a node of a cluster (createGateway with `database.url`, a real PostgreSQL):
 * its factory gets the node's cluster runtime and the node id its session rows and delivery leases
 * carry, it starts once the node has joined and its engine runs, it is stopped (customers
 * unbound) while the engine still runs, before the node drains and leaves, and /metrics carries its series beside the cluster's,
 * passing `promtool check metrics`.
 */
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { resolveConfigFromObject } from '../../../src/gateway/config.js';
import type { SmppServerContext } from '../../../src/gateway/smpp-server-hook.js';
import { createGateway } from '../../../src/index.js';
import { scrape } from '../../admin/admin-fixture.js';
import { tempDir, until } from '../../e2e/e2e-setup.js';
import { usePostgresSuite } from '../../support/postgres-suite.js';
import { fakeSmppServer, sessionView, type FakeServer } from './fake-parts.js';

const suite = usePostgresSuite();

describe('the SMPP server on a cluster node', () => {
  it('is built with the node\'s runtime, runs inside its membership, and shows its series beside the cluster\'s', async () => {
    const url = await suite.server().createDatabase();
    const config = resolveConfigFromObject({
      database: { url, keyFile: join(tempDir('smpp-server-pg'), 'cluster.key') },
      api: { host: '127.0.0.1', port: 0 },
      admin: { host: '127.0.0.1', port: 0 },
      transports: [{ name: 'sim', type: 'simulator' }],
      routes: [{ prefix: '', transport: 'sim' }],
      smppServer: { port: 0 },
    }, 'cluster.json');
    let context: SmppServerContext | undefined;
    let fake: FakeServer | undefined;
    const seen: { nodeAtStart?: string | null; engineAtClose?: string } = {};
    const gateway = await createGateway(config, {
      smppServerFactory: (ctx) => {
        context = ctx;
        fake = fakeSmppServer({
          waiting: new Map([['acme', 2]]),
          onBindGateStart: () => (seen.nodeAtStart = ctx.node.nodeId()),
          onListenerClose: () => (seen.engineAtClose = ctx.engine.currentTransports()[0]?.currentState().state),
        });
        return fake.server;
      },
    });
    let stopped = false;
    suite.afterThisTest(async () => {
      if (!stopped) await gateway.stop();
    });
    await gateway.start();
    const cluster = gateway.cluster!;
    expect(context?.cluster).toBe(cluster);
    // Joined before the server started: its rows can carry the node's id from the first bind.
    expect(seen.nodeAtStart).toBe(cluster.node.nodeId());
    expect(typeof seen.nodeAtStart).toBe('string');
    expect(context?.engineStore.kind).toBe('postgres');

    fake!.listener().sessions = [sessionView('s1', 'acme', { nodeId: cluster.node.nodeId() ?? '', windowInUse: 1, submitsPerSecond: 0 })];
    const admin = gateway.admin!.address()!;
    const metrics = await until(() => scrape(`http://${admin.host}:${admin.port}`), (m) => (m.series.get('smsgate_cluster_heartbeats_total') ?? 0) >= 1, 10_000, 'a heartbeat counted');
    expect(metrics.series.get('smsgate_smpp_server_sessions{account="acme"}')).toBe(1);
    expect(metrics.series.get('smsgate_smpp_server_receipts_waiting{account="acme"}')).toBe(2);
    const promtool = spawnSync('/usr/bin/promtool', ['check', 'metrics'], { input: metrics.text, encoding: 'utf8' });
    expect(`${promtool.stdout}${promtool.stderr}`).toBe('');
    expect(promtool.status).toBe(0);

    await gateway.stop();
    stopped = true;
    // Customers were unbound while the engine still ran (it drains, then the node leaves the cluster).
    expect(seen.engineAtClose).toBe('bound');
    expect(context?.engine.currentTransports()[0]?.currentState().state).not.toBe('bound');
    expect(fake?.events).toEqual(['bindGate.start', 'sender.start', 'listener.listen', 'listener.close', 'listener.closed', 'sender.stop']);
  });
});

/**
 * A config reload on a node of a cluster (createGateway with `database.url`, a real PostgreSQL):
 * each node reloads its own file; route changes apply at once, transport changes need a restart
 * there (its SMPP binds are slots shared with its peers), so a reload that would start one is
 * refused whole; /status.json shows the node's configHash, which moves only with what it applied.
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { resolveConfigFromObject } from '../../src/gateway/config.js';
import { createGateway } from '../../src/index.js';
import { tempDir } from '../e2e/e2e-setup.js';
import { usePostgresSuite } from '../support/postgres-suite.js';

const suite = usePostgresSuite();

describe('config reload on a cluster node', () => {
  it('applies a route change, refuses a transport change whole, and shows its hash', async () => {
    const url = await suite.server().createDatabase();
    const keyFile = join(tempDir('cluster-reload'), 'cluster.key');
    const configWith = (transports: { name: string; type: 'simulator' }[], routes: { prefix: string; transport: string }[]): ReturnType<typeof resolveConfigFromObject> =>
      resolveConfigFromObject({ database: { url, keyFile }, api: { host: '127.0.0.1', port: 0 }, admin: { host: '127.0.0.1', port: 0 }, transports, routes }, 'node.json');
    const gateway = await createGateway(configWith([{ name: 'sim', type: 'simulator' }], [{ prefix: '', transport: 'sim' }]));
    suite.afterThisTest(() => gateway.stop());
    await gateway.start();
    const admin = gateway.admin!.address()!;
    const statusJson = async (): Promise<{ configHash: string; routes: { route: string; current: string | null }[] }> =>
      (await fetch(`http://${admin.host}:${admin.port}/status.json`)).json() as Promise<{ configHash: string; routes: { route: string; current: string | null }[] }>;
    const started = await statusJson();
    expect(started.configHash).toBe(gateway.configHash);

    const routed = await gateway.reload(configWith([{ name: 'sim', type: 'simulator' }], [{ prefix: '353', transport: 'sim' }, { prefix: '', transport: 'sim' }]));
    expect(routed).toMatchObject({ reloaded: true, transports: { unchanged: ['sim'], added: [], changed: [], removed: [] } });
    const afterRoutes = await statusJson();
    expect(afterRoutes.configHash).not.toBe(started.configHash);
    expect(afterRoutes.routes.map((r) => [r.route, r.current])).toEqual([['353', 'sim'], ['', 'sim']]);

    const refused = await gateway.reload(configWith([{ name: 'sim', type: 'simulator' }, { name: 'sim2', type: 'simulator' }], [{ prefix: '', transport: 'sim2' }]));
    expect(refused).toMatchObject({ reloaded: false, error: { code: 'CONFIG_INVALID', key: 'transports' } });
    expect(refused.reloaded === false && refused.error.message).toContain('a cluster node changes transports by a restart');
    expect((await statusJson()).configHash).toBe(afterRoutes.configHash);
    expect(gateway.transports.map((t) => t.name)).toEqual(['sim']);
  });
});

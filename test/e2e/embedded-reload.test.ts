/**
 * gateway.reload(next) for a program that embeds the gateway: routes change in place; transports
 * the program handed in cannot be rebuilt from config, so a reload that would start, rebind or
 * remove one is refused whole (the running config and its hash stay); a changed listen port is
 * named as needing a restart; without a config file reload() has nothing to re-read and says so.
 */
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createGateway, resolveConfigFromObject, SimulatorTransport } from '../../src/index.js';
import { tempDir } from './e2e-setup.js';

const dir = tempDir('embedded-reload');
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function configWith(transports: { name: string; type: 'simulator' }[], routes: { prefix: string; transport: string }[], apiPort = 0): ReturnType<typeof resolveConfigFromObject> {
  return resolveConfigFromObject({ database: { path: join(dir, 'smsgate.sqlite') }, api: { host: '127.0.0.1', port: apiPort }, transports, routes }, 'embedded reload');
}

describe('gateway.reload with transports given by the program', () => {
  it('applies a route change and refuses a transport change whole', async () => {
    const config = configWith([{ name: 'injected', type: 'simulator' }], [{ prefix: '', transport: 'injected' }]);
    const simulator = new SimulatorTransport({ name: 'injected', type: 'simulator', maxPerSecond: 10_000 });
    const gateway = await createGateway(config, { transports: [simulator] });
    await gateway.start();
    try {
      const started = gateway.configHash;
      const routed = await gateway.reload(configWith([{ name: 'injected', type: 'simulator' }], [{ prefix: '44', transport: 'injected' }, { prefix: '', transport: 'injected' }]));
      expect(routed).toMatchObject({ reloaded: true, file: null, transports: { unchanged: ['injected'], changed: [], added: [], removed: [] }, restartNeeded: [] });
      expect(gateway.configHash).not.toBe(started);
      const afterRoutes = gateway.configHash;

      const refused = await gateway.reload(configWith([{ name: 'injected', type: 'simulator' }, { name: 'more', type: 'simulator' }], [{ prefix: '', transport: 'more' }]));
      expect(refused).toMatchObject({ reloaded: false, configHash: afterRoutes, error: { code: 'CONFIG_INVALID', key: 'transports' } });
      expect(refused.reloaded === false && refused.error.message).toContain('more added');
      expect(gateway.configHash).toBe(afterRoutes);
      expect(gateway.transports).toEqual([simulator]);
      expect(simulator.currentState().state).toBe('bound');

      // A listen port cannot move while running: the rest applies, the port is named for a restart.
      const listening = gateway.address();
      const moved = await gateway.reload(configWith([{ name: 'injected', type: 'simulator' }], [{ prefix: '', transport: 'injected' }], 18_099));
      expect(moved).toMatchObject({ reloaded: true, restartNeeded: ['api'] });
      expect(gateway.address()).toEqual(listening);
      const afterPort = gateway.configHash;
      expect(afterPort).not.toBe(afterRoutes);

      // Built from an object, not a file: nothing to re-read.
      const noFile = await gateway.reload();
      expect(noFile).toMatchObject({ reloaded: false, file: null, error: { code: 'CONFIG_INVALID' } });
      expect(gateway.configHash).toBe(afterPort);
    } finally {
      await gateway.stop();
    }
  });
});

/**
 * Each route and where its parts go now, as the status page and /status.json show them while a
 * route names one transport: the transport when it is bound, none (its parts wait) when it is not.
 * The page renders the table and the running config's hash, escaped; facts of a serve that gave
 * neither render without them.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { singleTransportRouteStatus } from '../../src/gateway/route-status-adapter.js';
import type { StatusFacts } from '../../src/admin/status-facts.js';
import { renderStatusPage } from '../../src/admin/status-page.js';
import { SimulatorTransport } from '../../src/transports/simulator/index.js';

const started: SimulatorTransport[] = [];
afterEach(async () => {
  await Promise.all(started.splice(0).map((t) => t.stop()));
});

function facts(over: Partial<StatusFacts>): StatusFacts {
  return {
    source: 'serve', generatedAt: '2026-11-26T06:00:00.000Z', gateway: null, readiness: null, transports: [], queues: [], campaigns: [],
    webhooks: { deadLetters: 0, clients: [] }, recentErrors: [], configHash: null, routes: null, ...over,
  };
}

describe('route status', () => {
  it('names the bound transport as where parts go, and none while it is down', async () => {
    const up = new SimulatorTransport({ name: 'up', type: 'simulator' });
    const down = new SimulatorTransport({ name: 'down', type: 'simulator' });
    await up.start();
    started.push(up);
    const routes = singleTransportRouteStatus([{ prefix: '44', transport: 'down' }, { prefix: '', transport: 'up' }], [up, down]);
    expect(routes).toEqual([
      { route: '44', strategy: 'single', transports: [{ name: 'down', up: false }], current: null },
      { route: '', strategy: 'single', transports: [{ name: 'up', up: true }], current: 'up' },
    ]);
  });

  it('renders the routes table and the config hash on the page', () => {
    const html = renderStatusPage(
      facts({
        configHash: 'sha256:<abc>',
        routes: [
          { route: '44', strategy: 'single', transports: [{ name: 'carrier<B>', up: false }], current: null },
          { route: '', strategy: 'single', transports: [{ name: 'carrierA', up: true }], current: 'carrierA' },
        ],
      }),
      { csrfToken: 't' },
    );
    expect(html).toContain('<code id="config-hash"');
    expect(html).toContain('sha256:&lt;abc&gt;');
    expect(html).toContain('<tr data-route="44"><td>44</td><td>single</td>\n<td>carrier&lt;B&gt; down</td><td class="current"><span class="quiet">none up: parts wait</span></td>');
    expect(html).toContain('<tr data-route=""><td>(every number)</td><td>single</td>\n<td>carrierA up</td><td class="current">carrierA</td>');
  });

  it('renders facts without routes or hash (the database alone, or an older serve)', () => {
    const fromDatabase = facts({ source: 'database', transports: null, recentErrors: null });
    const html = renderStatusPage(fromDatabase, { csrfToken: 't' });
    expect(html).not.toContain('config-hash');
    expect(html).toContain('<h2>Routes</h2><p>Not known');
    const { configHash: _h, routes: _r, ...older } = fromDatabase;
    expect(() => renderStatusPage(older as StatusFacts, { csrfToken: 't' })).not.toThrow();
  });
});

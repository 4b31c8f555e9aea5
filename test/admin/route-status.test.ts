/**
 * Each route and where its parts go now (the engine's routeStatus(), tested with the route planner
 * in test/engine/routing.test.ts), as the status page renders it. The page renders the table and the running config's hash, escaped; facts of a serve that gave
 * neither render without them.
 */
import { describe, expect, it } from 'vitest';
import type { StatusFacts } from '../../src/admin/status-facts.js';
import { renderStatusPage } from '../../src/admin/status-page.js';

function facts(over: Partial<StatusFacts>): StatusFacts {
  return {
    source: 'serve', generatedAt: '2026-11-26T06:00:00.000Z', gateway: null, readiness: null, transports: [], queues: [], campaigns: [],
    webhooks: { deadLetters: 0, clients: [] }, credits: { lowThreshold: null, clients: [] }, recentErrors: [], configHash: null, routes: null, ...over,
  };
}

describe('route status', () => {
  it('renders the routes table and the config hash on the page', () => {
    const html = renderStatusPage(
      facts({
        configHash: 'sha256:<abc>',
        routes: [
          { route: '44', prefix: '44', clients: null, strategy: 'single', transports: [{ name: 'carrier<B>', up: false }], current: null },
          { route: '', prefix: '', clients: null, strategy: 'single', transports: [{ name: 'carrierA', up: true }], current: 'carrierA' },
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

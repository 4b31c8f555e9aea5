/**
 * The cluster's value of each cluster-wide SMPP setting (src/cluster/config-agreement.ts): the value
 * most live nodes publish, a tie going to the oldest node's; and how a node standing against it
 * logs (once per disagreement), reports (/ready reasons) and is told whether it may bind.
 */
import { describe, expect, it } from 'vitest';
import { agreedValue, clusterSettingsOf, ConfigAgreement, disagreementsOf, type ClusterSettings, type PublishedSettings } from '../../src/cluster/config-agreement.js';
import { createLogger } from '../../src/common/log.js';
import type { TransportEntry } from '../../src/transports/registry.js';

const carrier = (binds: number, maxPerSecond = 200): TransportEntry => ({
  name: 'carrier', type: 'smpp', host: '127.0.0.1', port: 2775, systemId: 'esme', password: 'secret', binds, maxPerSecond,
});

function node(nodeId: string, startedAt: number, settings: ClusterSettings | null): PublishedSettings {
  return { nodeId, startedAt, settings };
}

describe('the cluster\'s settings', () => {
  it('are the SMPP transports\' binds, rate, window and account, defaults applied, no password, no modem', () => {
    const settings = clusterSettingsOf([carrier(2), { name: 'modem', type: 'modem', devices: [] } as unknown as TransportEntry]);
    expect(settings).toEqual({ carrier: { binds: 2, maxPerSecond: 200, window: 10, host: '127.0.0.1', port: 2775, systemId: 'esme' } });
  });

  it('take the majority value, a tie going to the oldest node', () => {
    const two = clusterSettingsOf([carrier(2)]);
    const four = clusterSettingsOf([carrier(4)]);
    expect(agreedValue([node('b', 20, four), node('a', 10, two)], 'carrier', 'binds')).toBe(2);
    expect(agreedValue([node('a', 10, two), node('b', 20, four), node('c', 30, four)], 'carrier', 'binds')).toBe(4);
    // A row without settings (an older node) has no vote.
    expect(agreedValue([node('a', 10, null), node('b', 20, four)], 'carrier', 'binds')).toBe(4);
    expect(disagreementsOf(four, [node('a', 10, two), node('b', 20, four)])).toEqual([{ transport: 'carrier', key: 'binds', here: 4, cluster: 2 }]);
    expect(disagreementsOf(two, [node('a', 10, two), node('b', 20, four)])).toEqual([]);
  });
});

describe('ConfigAgreement', () => {
  it('logs a disagreement once, reports it for /ready, holds the transport back until it agrees again', () => {
    const lines: Record<string, unknown>[] = [];
    const logger = createLogger({ level: 'info', destination: { write: (line: string) => lines.push(JSON.parse(line) as Record<string, unknown>) } });
    const two = clusterSettingsOf([carrier(2, 100)]);
    const mine = clusterSettingsOf([carrier(4)]);
    const agreement = new ConfigAgreement(mine, logger);
    expect(agreement.mayBind('carrier')).toBe(true);

    const cluster = [node('a', 10, two), node('b', 20, mine)];
    expect(agreement.update(cluster)).toBe(true);
    expect(agreement.update(cluster)).toBe(false);
    expect(agreement.mayBind('carrier')).toBe(false);
    expect(agreement.problems()).toEqual([
      'transport carrier: binds differs from the cluster (4 here, 2 on the cluster)',
      'transport carrier: maxPerSecond differs from the cluster (200 here, 100 on the cluster)',
    ]);
    expect(agreement.agreeingNodes('carrier')).toBe(1);
    expect(lines.filter((l) => String(l['msg']).includes('differs from the cluster')).map((l) => [l['key'], l['here'], l['cluster']])).toEqual([
      ['binds', 4, 2], ['maxPerSecond', 200, 100],
    ]);

    // The other node left: this one's values are the cluster's.
    expect(agreement.update([node('b', 20, mine)])).toBe(true);
    expect(agreement.mayBind('carrier')).toBe(true);
    expect(agreement.problems()).toEqual([]);
    expect(lines.filter((l) => String(l['msg']).includes('agrees with the cluster again'))).toHaveLength(2);
  });
});

/**
 * docs/reference/metrics.md names every metric the gateway metrics module registers: its own
 * smsgate_* series (a cluster node's included) and prom-client's default process and Node.js ones
 * it keeps.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { GatewayMetrics } from '../../src/admin/gateway-metrics.js';
import { TransportActivity } from '../../src/admin/transport-activity.js';
import type { ClusterStats } from '../../src/admin/cluster-stats.js';

async function registeredMetricNames(): Promise<string[]> {
  const metrics = new GatewayMetrics({
    // A gateway with no transports and an empty store: the names do not depend on the values.
    status: {
      queuedPartsByTransport: () => Promise.resolve([]),
      deadLetterCount: () => Promise.resolve(0),
      pendingWebhookCount: () => Promise.resolve(0),
      oldestDueByTransport: () => Promise.resolve([]),
      clientCredits: () => Promise.resolve([]),
    },
    transports: () => [],
    activity: new TransportActivity(),
  });
  const stats: ClusterStats = { nodeId: 'n1', liveNodes: 1, beats: 0, failedBeats: 0, rejoins: 0, nodesTakenOver: 0, rowsRequeued: 0, slotSessionOpen: true };
  metrics.watchCluster(() => stats);
  // A gateway running the SMPP server for customers: its series are registered then.
  metrics.watchSmppServer({ sessions: () => Promise.resolve([]), deliveriesWaiting: () => Promise.resolve(new Map()), submitCounts: () => [] });
  return (await metrics.registry.getMetricsAsJSON()).map((metric) => metric.name);
}

describe('docs/reference/metrics.md', () => {
  const doc = readFileSync('docs/reference/metrics.md', 'utf8');

  it('names every metric the gateway registers, cluster and SMPP server ones included', async () => {
    const names = await registeredMetricNames();
    expect(names).toContain('smsgate_transport_up');
    expect(names).toContain('smsgate_cluster_live_nodes');
    expect(names).toContain('smsgate_smpp_server_receipts_waiting');
    expect(names).toContain('process_cpu_seconds_total');
    const missing = names.filter((name) => !doc.includes(`\`${name}\``));
    expect(missing, `metrics missing from docs/reference/metrics.md: ${missing.join(', ')}`).toEqual([]);
  });
});

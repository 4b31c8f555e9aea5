/**
 * Config drift between the nodes of a cluster is not silent: two real `smsgate serve` nodes on one
 * throwaway PostgreSQL and a carrier that allows 2 binds for the system_id. Node A runs the
 * cluster's `binds: 2`; node B starts with `binds: 4`. B must notice that it differs (A was there
 * first: a tie of one node each goes to the oldest), say so once in its log naming the transport and
 * the key, answer /ready 503 naming them, and open no bind at all, so the carrier never sees a bind
 * beyond its limit (without the check B claimed slots 2 and 3 of its own four, and the carrier
 * refused them with ESME_RBINDFAIL). Then the carrier raises the limit to 4 and the operator rolls
 * the change out: A restarts with `binds: 4`; B, now running the cluster's value, binds, says it
 * agrees again, and is ready.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ClusterNode } from '../support/cluster-nodes.js';
import { freePort } from '../support/free-port.js';
import { useClusterPeers } from './cluster-setup.js';
import { until } from './e2e-setup.js';

const CARRIER_LIMIT = 2;
const BOUNDS = { binds: CARRIER_LIMIT, window: 10, maxPerSecond: 100 };
const DRIFT_REASON = `transport carrier: binds differs from the cluster (4 here, ${CARRIER_LIMIT} on the cluster)`;
/** How long B is watched for a bind it must not open: several of its heartbeats and slot syncs (1 s each). */
const WATCH_MS = 6_000;

const peers = useClusterPeers('cluster-config-drift', { maxBinds: CARRIER_LIMIT });

interface Ready {
  status: number;
  reasons: string[];
}

async function readyOf(node: ClusterNode): Promise<Ready> {
  const response = await fetch(`${node.adminUrl}/ready`);
  const body = (await response.json()) as { reasons?: string[] };
  return { status: response.status, reasons: body.reasons ?? [] };
}

/** A copy of `from`'s config with its own admin port and the carrier's `binds`, in a directory of its own. */
async function configLike(from: ClusterNode, dir: string, binds: number): Promise<{ path: string; adminUrl: string }> {
  const raw = JSON.parse(readFileSync(from.configPath, 'utf8')) as { admin: { port: number }; transports: { binds: number }[] };
  const adminPort = await freePort();
  raw.admin.port = adminPort;
  (raw.transports[0] as { binds: number }).binds = binds;
  mkdirSync(dir, { recursive: true });
  const path = join(dir, 'smsgate.json');
  writeFileSync(path, JSON.stringify(raw, null, 2));
  return { path, adminUrl: `http://127.0.0.1:${adminPort}` };
}

function driftLogLines(node: ClusterNode): string[] {
  return node.logLines.filter((line) => line.includes('binds differs from the cluster'));
}

describe('a node whose binds differ from the cluster', () => {
  it('says so once, is not ready naming the key, binds nothing until it agrees, then binds', async () => {
    const { carrier } = peers();
    const cluster = await peers().startNodes(1, BOUNDS);
    const a = cluster.node(0);
    expect(a.connectionsTo(carrier.address.port)).toBe(CARRIER_LIMIT);

    const bConfig = await configLike(a, join(dirname(dirname(a.configPath)), 'node-drifted'), 4);
    const b = new ClusterNode(1, bConfig.path, bConfig.adminUrl, []);
    await b.start();
    try {
      const ready = await until(() => readyOf(b), (r) => r.status === 503 && r.reasons.includes(DRIFT_REASON), 30_000, 'B not ready, naming binds');
      expect(ready.reasons).toContain(DRIFT_REASON);

      // Watched over several slot syncs: B opens no bind, the carrier refuses none, A keeps both.
      const watchUntil = Date.now() + WATCH_MS;
      while (Date.now() < watchUntil) {
        expect(b.connectionsTo(carrier.address.port)).toBe(0);
        expect(carrier.bindsRefused).toBe(0);
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
      expect(carrier.maxConcurrentBinds).toBeLessThanOrEqual(CARRIER_LIMIT);
      expect(a.connectionsTo(carrier.address.port)).toBe(CARRIER_LIMIT);
      expect((await readyOf(b)).reasons).toContain(DRIFT_REASON);
      expect((await readyOf(a)).status).toBe(200);
      // Logged once (not at every beat), naming transport, key and both values.
      const logged = driftLogLines(b).map((line) => JSON.parse(line) as Record<string, unknown>);
      expect(logged).toEqual([expect.objectContaining({ transport: 'carrier', key: 'binds', here: 4, cluster: CARRIER_LIMIT })]);
      expect(driftLogLines(a)).toEqual([]);

      // The carrier allows 4 now, and the operator rolls `binds: 4` out: A restarts with it.
      carrier.setMaxBinds(4);
      expect(await a.stop()).toBe(0);
      const aConfig = JSON.parse(readFileSync(a.configPath, 'utf8')) as { transports: { binds: number }[] };
      (aConfig.transports[0] as { binds: number }).binds = 4;
      writeFileSync(a.configPath, JSON.stringify(aConfig, null, 2));
      await a.start();

      // B agrees again: it binds (its share of 4 over the two nodes) and is ready; so is A.
      await until(() => readyOf(b), (r) => r.status === 200, 30_000, 'B ready again');
      await until(() => b.connectionsTo(carrier.address.port), (n) => n > 0, 30_000, 'B bound');
      await until(() => readyOf(a), (r) => r.status === 200, 30_000, 'A ready');
      expect(b.logLines.some((line) => line.includes('binds agrees with the cluster again'))).toBe(true);
      expect(driftLogLines(b)).toHaveLength(1);
      expect(carrier.bindsRefused).toBe(0);
      expect(carrier.maxConcurrentBinds).toBeLessThanOrEqual(4);
    } finally {
      await b.stop();
    }
    expect(await cluster.stopAll()).toEqual([0]);
  }, 180_000);
});

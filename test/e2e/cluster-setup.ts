/**
 * What the cluster end-to-end tests share: the carrier (ClusterSmsc), the webhook
 * receiver, the nodes on one database, the campaign, and the accounting after a node was killed or
 * frozen, checked with the numbers: lost 0 (every recipient final, every recipient's
 * webhook delivered), duplicate submits at most binds x window, never more binds than the limit
 * (nor a bind the carrier had to refuse), the per-second submit rate never above the cap plus one
 * window (binds x window: what the cluster may have in flight; also over any 10 s: ten times the
 * cap plus one window), every receipt matched.
 */
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, expect } from 'vitest';
import { ClusterSmsc, type ClusterSmscOptions } from '../support/cluster-smsc.js';
import { ClusterNodes, readRows, type ClusterDatabase, type ClusterNode } from '../support/cluster-nodes.js';
import { startPostgres, type PostgresServer } from '../support/postgres-server.js';
import { WebhookReceiver } from '../support/webhook-receiver.js';
import { getSummary, lastBodyByTo, postCampaign, tempDir, until, type Summary } from './e2e-setup.js';

export const WEBHOOK_SECRET = 'cluster-test-secret';
export const SENDER = 'Shop';

/** One in ten numbers gets an UNDELIV receipt, so both receipt paths run. */
export const statusFor = (msisdn: string): string => (msisdn.endsWith('9') ? 'UNDELIV' : 'DELIVRD');

export const msisdnsFor = (count: number): string[] => Array.from({ length: count }, (_, i) => `35386${String(i).padStart(7, '0')}`);

/** Short retries and polls so a takeover is not slowed by the defaults meant for production. */
export const FAST_CLUSTER_CONFIG: Record<string, unknown> = {
  engine: { pollIntervalMs: 50, retryBaseDelayMs: 200, drainTimeoutMs: 2_000 },
  processing: { pollIntervalMs: 50 },
  webhooks: { retryDelaysMs: [200, 400, 800] },
};

export function campaignBody(msisdns: readonly string[]): unknown {
  return { text: 'Flash sale today only', from: SENDER, recipientInfo: msisdns.map((msisdn, i) => ({ msisdn, ClientReference: `c${i}` })) };
}

export interface CarrierBounds {
  binds: number;
  window: number;
  maxPerSecond: number;
}

export interface ClusterFigures {
  extraSubmits: number;
  maxBindsAtOnce: number;
  bindsRefused: number;
  maxSubmitsInOneSecond: number;
  maxSubmitsInTenSeconds: number;
  receiptsOnOtherBind: number;
  unmatchedReceipts: number;
  webhookRequests: number;
  /** The longest the carrier's (this process's) event loop stood still: see ClusterSmsc.longestStallMs. */
  carrierLongestStallMs: number;
}

/** The summary from the first live node that answers, once every recipient is final. */
export async function finalSummary(nodes: readonly ClusterNode[], token: string, id: string, timeoutMs: number): Promise<Summary | undefined> {
  return until(
    async () => {
      const live = nodes.filter((node) => !node.exited);
      for (const node of live) {
        try {
          return await getSummary(node.baseUrl, token, id);
        } catch {
          // A node stopped by SIGSTOP (or going away) does not answer: ask the next one.
        }
      }
      return undefined;
    },
    (summary) => summary !== undefined && summary.pending === 0,
    timeoutMs,
    'every recipient final',
  );
}

/**
 * The accounting after the run: nothing lost, duplicates and rate within the bounds, binds never
 * over the limit, receipts matched. Expects every recipient final already (finalSummary).
 */
export async function expectNothingLost(run: {
  database: ClusterDatabase;
  smsc: ClusterSmsc;
  receiver: WebhookReceiver;
  msisdns: readonly string[];
  summary: Summary | undefined;
  bounds: CarrierBounds;
  webhookTimeoutMs: number;
}): Promise<ClusterFigures> {
  const { smsc, receiver, msisdns, bounds } = run;
  const recipients = msisdns.length;
  const undeliverable = msisdns.filter((m) => statusFor(m) === 'UNDELIV').length;
  const unmatched = await readRows<{ message_id: string; match_state: string }>(run.database, `SELECT message_id, match_state FROM receipts WHERE match_state <> 'matched'`);
  const figures: ClusterFigures = {
    extraSubmits: smsc.duplicates().extraSubmits,
    maxBindsAtOnce: smsc.maxConcurrentBinds,
    bindsRefused: smsc.bindsRefused,
    maxSubmitsInOneSecond: smsc.maxSubmitsWithin(1_000),
    maxSubmitsInTenSeconds: smsc.maxSubmitsWithin(10_000),
    receiptsOnOtherBind: smsc.receiptsOnOtherBind,
    unmatchedReceipts: unmatched.length,
    webhookRequests: receiver.count,
    carrierLongestStallMs: smsc.longestStallMs,
  };
  // Printed before the checks, so a failing run shows every figure, not only the first one off.
  console.log(`cluster figures: ${JSON.stringify(figures)}`);
  expect(run.summary).toEqual({ totalSent: recipients, delivered: recipients - undeliverable, undelivered: undeliverable, pending: 0 });

  // Every recipient reached the carrier; re-sends are bounded by what the cluster had in flight.
  expect(smsc.submitsByDestination.size).toBe(recipients);
  const { extraSubmits } = figures;
  expect(extraSubmits).toBeLessThanOrEqual(bounds.binds * bounds.window);

  // The carrier's limits held: never more binds than it allows (nor one it had to refuse), and
  // never more submits in any second than the cap plus one window.
  expect(smsc.maxConcurrentBinds).toBeLessThanOrEqual(bounds.binds);
  expect(smsc.bindsRefused).toBe(0);
  expect(figures.maxSubmitsInOneSecond).toBeLessThanOrEqual(bounds.maxPerSecond + bounds.binds * bounds.window);
  // The same bound over longer spans: one window of slack in all, not one per second, so a cap
  // overshot a little every second (a refilled bucket, say) shows too.
  expect(figures.maxSubmitsInTenSeconds).toBeLessThanOrEqual(10 * bounds.maxPerSecond + bounds.binds * bounds.window);
  // Receipts came on other binds than their submits' (other nodes' binds, mostly) and were matched.
  expect(smsc.receiptsOnOtherBind).toBeGreaterThan(0);

  // Every recipient's final receipt reached the receiver, signed (a webhook may repeat: at-least-once).
  await receiver.waitUntil(() => new Set(receiver.requests.map((r) => r.rawBody.toString('utf8'))).size >= recipients, run.webhookTimeoutMs, 'one webhook per recipient');
  expect(receiver.signatureFailures).toBe(0);
  const finalByTo = lastBodyByTo(receiver.bodies() as { To: string; Status: string; ClientReference: string | null }[]);
  expect(finalByTo.size).toBe(recipients);
  msisdns.forEach((msisdn, i) => {
    expect(finalByTo.get(msisdn)).toEqual({ To: msisdn, From: SENDER, Status: statusFor(msisdn), ClientReference: `c${i}` });
  });

  // What the database holds: every part final and every recipient dispatched.
  expect(await readRows(run.database, 'SELECT state, CAST(COUNT(*) AS INTEGER) AS n FROM message_parts GROUP BY state ORDER BY state')).toEqual([
    { state: 'delivered', n: recipients - undeliverable },
    { state: 'undelivered', n: undeliverable },
  ]);
  expect(await readRows(run.database, `SELECT CAST(COUNT(*) AS INTEGER) AS n FROM recipients WHERE dispatch_state <> 'dispatched'`)).toEqual([{ n: 0 }]);

  // Every receipt matched, but for one kind that cannot be: the receipt of a submit whose answer
  // (its message id) died with the node that sent it, and was therefore sent again. Each such
  // receipt names an id the carrier gave to a destination it saw more than once, never the id the
  // destination's part holds now; there are at most as many such ids as the extra submits. An id
  // may be stored twice: a frozen node's unanswered deliver_sm is offered again on another bind,
  // and the node, woken, reads the first offer too (each arrival is stored).
  expect(new Set(unmatched.map((receipt) => receipt.message_id)).size).toBeLessThanOrEqual(extraSubmits);
  if (unmatched.length > 0) {
    const parts = await readRows<{ msisdn: string; message_id: string }>(
      run.database,
      'SELECT r.msisdn AS msisdn, p.message_id AS message_id FROM message_parts p JOIN recipients r ON r.id = p.recipient_id',
    );
    const idOfPart = new Map(parts.map((p) => [p.msisdn, p.message_id]));
    for (const receipt of unmatched) {
      const destination = smsc.destinationByMessageId.get(receipt.message_id);
      expect(destination, `receipt ${receipt.message_id} (${receipt.match_state}) names an id the carrier gave`).toBeDefined();
      expect(smsc.submitsByDestination.get(destination as string)).toBeGreaterThan(1);
      expect(idOfPart.get(destination as string)).not.toBe(receipt.message_id);
    }
  }
  return figures;
}

/** The nodes holding a bind to the carrier now (an established connection to its port). */
export function bindHolders(nodes: readonly ClusterNode[], smscPort: number): ClusterNode[] {
  return nodes.filter((node) => !node.exited && node.connectionsTo(smscPort) > 0);
}

/** What a cluster test file runs against: one throwaway PostgreSQL, the carrier, a webhook receiver. */
export interface ClusterPeers {
  readonly database: ClusterDatabase;
  /** The PostgreSQL server itself (to restart or freeze it mid-campaign). */
  readonly postgres: PostgresServer;
  readonly carrier: ClusterSmsc;
  readonly receiver: WebhookReceiver;
  /** Starts `nodes` serve nodes on the database against the carrier (stopped after the file) and waits until the carrier's binds are all held. */
  startNodes(nodes: number, bounds: CarrierBounds): Promise<ClusterNodes>;
}

/**
 * The peers of a cluster test file: started in beforeAll, stopped in afterAll (the nodes first,
 * with SIGCONT for one a failed assertion left frozen), also when a test failed.
 */
export function useClusterPeers(name: string, carrierOptions: Omit<ClusterSmscOptions, 'statusFor'>): () => ClusterPeers {
  let dir: string | undefined;
  let postgres: PostgresServer | undefined;
  let carrier: ClusterSmsc | undefined;
  let receiver: WebhookReceiver | undefined;
  let cluster: ClusterNodes | undefined;
  let peers: ClusterPeers | undefined;
  beforeAll(async () => {
    dir = tempDir(name);
    postgres = await startPostgres();
    const database: ClusterDatabase = { kind: 'postgres', url: await postgres.createDatabase() };
    const started = { database, postgres, carrier: await ClusterSmsc.start({ ...carrierOptions, statusFor }), receiver: await WebhookReceiver.start({ secret: WEBHOOK_SECRET }) };
    carrier = started.carrier;
    receiver = started.receiver;
    peers = {
      ...started,
      async startNodes(nodes, bounds) {
        cluster = await ClusterNodes.start({
          dir: join(dir as string, 'nodes'),
          database,
          nodes,
          carrier: { ...started.carrier.address, ...bounds },
          account: { webhookUrl: started.receiver.url, webhookSecret: WEBHOOK_SECRET, sender: SENDER },
          extraConfig: FAST_CLUSTER_CONFIG,
        });
        const all = cluster.nodes;
        const port = started.carrier.address.port;
        await until(() => all.reduce((open, node) => open + (node.exited ? 0 : node.connectionsTo(port)), 0), (n) => n === bounds.binds, 60_000, `all ${bounds.binds} binds held`);
        return cluster;
      },
    };
  }, 60_000);
  afterAll(async () => {
    await cluster?.stopAll();
    await receiver?.close();
    await carrier?.stop();
    await postgres?.stop();
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  }, 60_000);
  return () => {
    if (peers === undefined) throw new Error('the cluster peers start in beforeAll');
    return peers;
  };
}

/**
 * The database-outage scenario of the restart and freeze tests: two nodes, a 4,000-recipient
 * campaign, `outage` run at 25% of the submits (the leases run out meanwhile), then nothing lost and
 * re-sends within binds x window. The node whose first beat comes back first reaps the other, which
 * finds itself fenced out and rejoins; the first keeps its row, so not every node is fenced (a race).
 */
export async function runDatabaseOutage(
  peers: () => ClusterPeers,
  bounds: { binds: number; window: number; maxPerSecond: number },
  label: string,
  outage: (postgres: ClusterPeers['postgres']) => Promise<void>,
): Promise<void> {
  const recipients = 4_000;
  const { database, postgres, carrier, receiver } = peers();
  const cluster = await peers().startNodes(2, bounds);
  const { nodes } = cluster;
  const msisdns = msisdnsFor(recipients);
  const { status, id } = await postCampaign(cluster.node(0).baseUrl, cluster.account.token, campaignBody(msisdns));
  expect(status).toBe(202);
  await until(() => carrier.submitCount, (n) => n >= recipients * 0.25, 120_000, '25% of the submits');
  const submitsAtOutage = carrier.submitCount;
  await outage(postgres);
  await until(
    () => nodes.map((node) => node.logLines.some((line) => line.includes('fenced out of the cluster'))),
    (fenced) => fenced.some(Boolean),
    60_000,
    'a node fenced and rejoined',
  );
  const summary = await finalSummary(nodes, cluster.account.token, id, 180_000);
  const figures = await expectNothingLost({ database, smsc: carrier, receiver, msisdns, summary, bounds, webhookTimeoutMs: 60_000 });
  console.log(`cluster ${label} at ${submitsAtOutage} submits: ${JSON.stringify(figures)}`);
  expect(await cluster.stopAll()).toEqual(nodes.map(() => 0));
}

/**
 * Three real `smsgate serve` nodes on one throwaway PostgreSQL: sixty concurrent POST /v1/campaign,
 * twenty to each node, against a balance that covers twenty of them get exactly twenty 202s and
 * forty 400s, available never below zero (the reservation locks the client's credits row in the
 * transaction that stores the campaign, whatever the node); and one Idempotency-Key sent to all
 * three nodes at once makes one campaign, its 202 and id the same from every node that answers 202.
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { applyCreditMovements } from '../../src/store/postgres/credit-ledger.js';
import { PG_TYPES } from '../../src/store/postgres/pool.js';
import type { GatewayProcess } from '../support/gateway-process.js';
import { ClusterSmsc } from '../support/cluster-smsc.js';
import { until } from '../e2e/e2e-setup.js';
import { usePgServePeers } from '../e2e/pg-serve-setup.js';

const NODES = 3;
const REQUESTS = 60;
const COVERED = 20;

const peers = usePgServePeers('credits-three-nodes', {
  webhookSecret: 'credits-secret',
  startSmsc: () => ClusterSmsc.start({ maxBinds: NODES }),
  transport: { window: 10, maxPerSecond: 1_000, binds: NODES },
  // Twenty requests of one client at once on each node: past the default uploads-per-client cap (429).
  configure: (raw) => {
    raw['api'] = { ...(raw['api'] as Record<string, unknown>), maxUploadsPerClient: REQUESTS };
  },
});

function post(baseUrl: string, token: string, body: unknown, key?: string): Promise<{ status: number; json: Record<string, unknown> }> {
  return fetch(`${baseUrl}/v1/campaign`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}`, ...(key === undefined ? {} : { 'idempotency-key': key }) },
    body: JSON.stringify(body),
  }).then(async (res) => ({ status: res.status, json: (await res.json()) as Record<string, unknown> }));
}

describe('credits and idempotency keys across three nodes on one PostgreSQL', () => {
  let pool: pg.Pool;
  let clientId: number;
  const nodes: GatewayProcess[] = [];

  beforeAll(async () => {
    pool = new pg.Pool({ connectionString: peers().url, types: PG_TYPES, max: 2 });
    clientId = ((await pool.query<{ id: number }>(`SELECT id FROM clients WHERE name = 'acme'`)).rows[0]!).id;
    for (let i = 0; i < NODES; i++) nodes.push(await peers().spawn());
  }, 180_000);
  afterAll(async () => {
    await pool?.end();
  });

  async function account(): Promise<{ balance: number; reserved: number }> {
    return (await pool.query<{ balance: number; reserved: number }>('SELECT balance, reserved FROM client_credits WHERE client_id = $1', [clientId])).rows[0]!;
  }

  it('accepts exactly twenty of sixty concurrent requests spread over the nodes; available never below zero', async () => {
    const { token } = peers();
    await applyCreditMovements(pool, [{ clientId, kind: 'top-up', credits: COVERED, campaignId: null, note: 'test' }], Date.now());
    let lowest = Number.POSITIVE_INFINITY;
    let sampling = true;
    const sampler = (async () => {
      while (sampling) {
        const now = await account();
        lowest = Math.min(lowest, now.balance - now.reserved);
      }
    })();
    // One recipient, one part, 1 credit each; request i goes to node i mod 3.
    const results = await Promise.all(Array.from({ length: REQUESTS }, (_, i) =>
      post(nodes[i % NODES]!.baseUrl, token, { text: `Hello ${i}`, from: 'Shop', recipientInfo: [{ msisdn: `3538699${String(i).padStart(5, '0')}` }] })));
    sampling = false;
    await sampler;
    expect(results.filter((r) => r.status !== 202 && r.status !== 400)).toEqual([]);
    expect(results.filter((r) => r.status === 202)).toHaveLength(COVERED);
    const refused = results.filter((r) => r.status === 400);
    expect(refused).toHaveLength(REQUESTS - COVERED);
    expect(refused[0]!.json).toMatchObject({ title: 'Validation Error', detail: 'not enough credits: the campaign needs 1 credits and 0 are available' });
    expect(lowest).toBeGreaterThanOrEqual(0);
    const ledger = (await pool.query<{ kind: string; n: number; sum: number }>(
      `SELECT kind, COUNT(*)::int AS n, SUM(credits)::int AS sum FROM credit_ledger WHERE client_id = $1 GROUP BY kind ORDER BY kind`, [clientId])).rows;
    expect(ledger.find((r) => r.kind === 'reserve')).toEqual({ kind: 'reserve', n: COVERED, sum: COVERED });
    expect((await pool.query<{ n: number }>('SELECT COUNT(*)::int AS n FROM campaigns WHERE client_id = $1', [clientId])).rows[0]!.n).toBe(COVERED);
    // The sums are the ledger's. The nodes keep sending and charging the accepted campaigns
    // meanwhile, so the row and the ledger are read in ONE statement (one snapshot): each movement
    // and the row's change are written in one transaction.
    const { balance, reserved, ledgerBalance, ledgerReserved } = (await pool.query<{ balance: number; reserved: number; ledgerBalance: number; ledgerReserved: number }>(
      `SELECT c.balance, c.reserved,
              COALESCE(SUM(l.credits) FILTER (WHERE l.kind IN ('top-up', 'correction', 'charge')), 0)::int AS "ledgerBalance",
              COALESCE(SUM(l.credits) FILTER (WHERE l.kind IN ('reserve', 'release')), 0)::int AS "ledgerReserved"
         FROM client_credits c LEFT JOIN credit_ledger l ON l.client_id = c.client_id
        WHERE c.client_id = $1 GROUP BY c.balance, c.reserved`, [clientId])).rows[0]!;
    expect(balance - reserved).toBeGreaterThanOrEqual(0);
    expect({ balance, reserved }).toEqual({ balance: ledgerBalance, reserved: ledgerReserved });
  }, 120_000);

  it('makes one campaign of one Idempotency-Key sent to every node at once, and answers another body 422 on any node', async () => {
    const { token } = peers();
    await applyCreditMovements(pool, [{ clientId, kind: 'top-up', credits: 10, campaignId: null, note: 'test' }], Date.now());
    const before = (await pool.query<{ n: number }>('SELECT COUNT(*)::int AS n FROM campaigns WHERE client_id = $1', [clientId])).rows[0]!.n;
    const payload = { text: 'Once', from: 'Shop', recipientInfo: [{ msisdn: '353869900001' }] };
    const first = await Promise.all(nodes.map((node) => post(node.baseUrl, token, payload, 'one-key-three-nodes')));
    expect(first.every((r) => r.status === 202 || r.status === 409)).toBe(true);
    expect(first.filter((r) => r.status === 202).length).toBeGreaterThanOrEqual(1);
    // Retried until every node answers 202: all with the one id.
    const answers = await until(() => Promise.all(nodes.map((node) => post(node.baseUrl, token, payload, 'one-key-three-nodes'))),
      (all) => all.every((r) => r.status === 202), 30_000, 'every node replaying the key');
    const ids = new Set([...first, ...answers].filter((r) => r.status === 202).map((r) => r.json['id']));
    expect(ids.size).toBe(1);
    expect((await pool.query<{ n: number }>('SELECT COUNT(*)::int AS n FROM campaigns WHERE client_id = $1', [clientId])).rows[0]!.n).toBe(before + 1);
    const [id] = [...ids] as string[];
    expect((await pool.query<{ n: number }>(`SELECT COUNT(*)::int AS n FROM credit_ledger WHERE campaign_id = $1 AND kind = 'reserve'`, [id])).rows[0]!.n).toBe(1);
    for (const node of nodes) {
      const other = await post(node.baseUrl, token, { ...payload, text: 'Twice' }, 'one-key-three-nodes');
      expect(other.status).toBe(422);
    }
  }, 120_000);
});

/**
 * A PostgreSQL that stops under a running `smsgate serve`: every API endpoint answers 503 with
 * Retry-After (problem+json; the token endpoints in their OAuth shape), never 500; the API logs the
 * outage as one outage (a first line, no stack, no line per request); and once the database is
 * back the same tokens work again on every endpoint without a restart.
 *
 * The gateway reaches the real PostgreSQL through a TCP relay on 127.0.0.1 (test/support/tcp-relay.ts)
 * so the data survives the "stop": stopListening() resets every connection and refuses new ones
 * (ECONNREFUSED), exactly what a node sees of a stopped server; listenAgain() is the server back.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { gatewayConfig, until } from '../e2e/e2e-setup.js';
import { GatewayProcess, seedPgAccount, writeGatewayConfig } from '../support/gateway-process.js';
import { startPostgres, type PostgresServer } from '../support/postgres-server.js';
import { ReceiptingSmsc } from '../support/receipting-smsc.js';
import { TcpRelay } from '../support/tcp-relay.js';

/** Requests made to each endpoint while the database is down. */
const ROUNDS = 15;
/** API log lines at warn or above that one outage may write (its first line; a 30 s summary cannot come within the test). */
const MAX_OUTAGE_LINES = 3;

interface LogLine { level: number; msg: string; component?: string; module?: string; stack?: unknown; err?: { stack?: unknown } }

let dir: string;
let server: PostgresServer;
let relay: TcpRelay;
let smsc: ReceiptingSmsc;
let gateway: GatewayProcess;
let token: string;
/** seedPgAccount's admin password (test/support/gateway-process.ts). */
const PASSWORD = 'correct horse battery staple';

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'smsgate-pg-outage-'));
  server = await startPostgres();
  const url = await server.createDatabase();
  relay = await TcpRelay.start(server.host, server.port);
  smsc = await ReceiptingSmsc.start();
  const raw = gatewayConfig(dir, smsc.address);
  raw['database'] = { url: url.replace(`:${server.port}/`, `:${relay.port}/`), keyFile: join(dir, 'cluster.key') };
  const written = writeGatewayConfig(dir, raw);
  const account = await seedPgAccount(written.config, { senders: [{ name: 'Shop', type: 0 }] });
  token = account.token;
  gateway = await GatewayProcess.spawn(written.path);
}, 120_000);

afterAll(async () => {
  gateway?.kill('SIGKILL');
  await gateway?.waitForExit();
  await relay?.close();
  await smsc?.stop();
  await server?.stop();
  rmSync(dir, { recursive: true, force: true });
});

const campaignBody = JSON.stringify({ text: 'Hello', from: 'Shop', recipientInfo: [{ msisdn: '353861234567' }] });

interface Call { name: string; problemJson: boolean; send(): Promise<Response> }

function calls(campaignId: string): Call[] {
  const bearer = { authorization: `Bearer ${token}` };
  const base = gateway.baseUrl;
  return [
    { name: 'POST /v1/campaign', problemJson: true, send: () => fetch(`${base}/v1/campaign`, { method: 'POST', headers: { ...bearer, 'content-type': 'application/json' }, body: campaignBody }) },
    { name: 'GET /v1/campaign/{id}', problemJson: true, send: () => fetch(`${base}/v1/campaign/${campaignId}`, { headers: bearer }) },
    { name: 'GET /v1/inbound', problemJson: true, send: () => fetch(`${base}/v1/inbound`, { headers: bearer }) },
    { name: 'GET /api/v2/senderlist', problemJson: true, send: () => fetch(`${base}/api/v2/senderlist`, { headers: bearer }) },
    {
      name: 'POST /auth/token',
      problemJson: false,
      send: () => fetch(`${base}/auth/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ client_id: 'messaging-api', grant_type: 'password', username: 'acme-admin', password: PASSWORD }).toString(),
      }),
    },
  ];
}

function parsedLines(from: number): LogLine[] {
  return gateway.logLines.slice(from).flatMap((line) => {
    try {
      return [JSON.parse(line) as LogLine];
    } catch {
      return [];
    }
  });
}

describe('the API while PostgreSQL is stopped', () => {
  it('answers 503 problem+json with Retry-After on every endpoint, logs the outage once without a stack, and recovers', async () => {
    const created = await calls('')[0]!.send();
    expect(created.status).toBe(202);
    const { id } = (await created.json()) as { id: string };
    // The summary exists once the processor has expanded the campaign.
    await until(async () => (await calls(id)[1]!.send()).status, (status) => status === 200, 20_000, 'the campaign summary');
    for (const call of calls(id)) expect((await call.send()).status, call.name).toBe(call.name === 'POST /v1/campaign' ? 202 : 200);

    const logFrom = gateway.logLines.length;
    await relay.stopListening();
    const statuses = new Map<string, number[]>();
    for (let round = 0; round < ROUNDS; round++) {
      for (const call of calls(id)) {
        const response = await call.send();
        statuses.set(call.name, [...(statuses.get(call.name) ?? []), response.status]);
        expect(response.status, call.name).toBe(503);
        expect(response.headers.get('retry-after'), call.name).toMatch(/^\d+$/);
        const body = (await response.json()) as Record<string, unknown>;
        if (call.problemJson) {
          expect(response.headers.get('content-type'), call.name).toMatch(/^application\/problem\+json/);
          expect(body, call.name).toMatchObject({ status: 503, title: 'Service Unavailable' });
        } else {
          expect(body, call.name).toMatchObject({ error: 'temporarily_unavailable' });
        }
      }
    }
    const outageLines = parsedLines(logFrom);
    const apiLines = outageLines.filter((line) => line.component === 'api' || line.module === 'auth-http');
    const apiWarnings = apiLines.filter((line) => line.level >= 40);
    const withStack = apiLines.filter((line) => line.stack !== undefined || line.err?.stack !== undefined || JSON.stringify(line).includes('\\n    at '));
    console.log(`database stopped: ${ROUNDS * 5} requests over 5 endpoints, all 503; API log lines at warn or above: ${apiWarnings.length}, with a stack: ${withStack.length}; ` +
      `every log line meanwhile: ${outageLines.length}`);
    expect(withStack).toEqual([]);
    expect(apiWarnings.length).toBeGreaterThanOrEqual(1);
    expect(apiWarnings.length).toBeLessThanOrEqual(MAX_OUTAGE_LINES);
    expect(outageLines.filter((line) => line.msg === 'unexpected error while handling a request')).toEqual([]);

    const recoveryFrom = gateway.logLines.length;
    await relay.listenAgain();
    await until(async () => (await calls(id)[2]!.send()).status, (status) => status === 200, 30_000, 'GET /v1/inbound after the database is back');
    for (const call of calls(id)) expect((await call.send()).status, call.name).toBe(call.name === 'POST /v1/campaign' ? 202 : 200);
    expect(parsedLines(recoveryFrom).filter((line) => line.component === 'api' && /works again/.test(line.msg))).toHaveLength(1);
  }, 120_000);
});

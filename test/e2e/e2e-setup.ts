/**
 * Shared pieces of the end-to-end tests: a temp dir, a gateway config routing everything to an
 * SMPP test SMSC, small HTTP helpers against the API, and a read-only look at a gateway's database.
 */
import { mkdtempSync } from 'node:fs';
import Database from 'better-sqlite3';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'vitest';
import type { WebhookReceiver } from '../support/webhook-receiver.js';

export function tempDir(prefix: string): string {
  return mkdtempSync(join(tmpdir(), `smsgate-${prefix}-`));
}

export function gatewayConfig(dir: string, smsc: { host: string; port: number }, overrides: { window?: number; maxPerSecond?: number } = {}): Record<string, unknown> {
  return {
    database: { path: join(dir, 'smsgate.sqlite') },
    api: { host: '127.0.0.1', port: 0 },
    // info: the child's "listening on" line is how GatewayProcess finds its port.
    logging: { level: 'info' },
    engine: { pollIntervalMs: 50, retryBaseDelayMs: 200, drainTimeoutMs: 2_000 },
    processing: { pollIntervalMs: 50 },
    webhooks: { retryDelaysMs: [200, 400, 800] },
    transports: [
      {
        name: 'carrier',
        type: 'smpp',
        host: smsc.host,
        port: smsc.port,
        systemId: 'esme',
        password: 'secret',
        bindMode: 'transceiver',
        window: overrides.window ?? 10,
        maxPerSecond: overrides.maxPerSecond ?? 10_000,
      },
    ],
    routes: [{ prefix: '', transport: 'carrier' }],
  };
}

export async function postCampaign(baseUrl: string, token: string, body: unknown): Promise<{ status: number; id: string }> {
  const response = await fetch(`${baseUrl}/v1/campaign`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
    body: JSON.stringify(body),
  });
  const json = (await response.json()) as { id: string };
  return { status: response.status, id: json.id };
}

export interface Summary {
  totalSent: number;
  delivered: number;
  undelivered: number;
  pending: number;
}

/** The summary, or undefined while the campaign is still processing (404). */
export async function getSummary(baseUrl: string, token: string, id: string): Promise<Summary | undefined> {
  const response = await fetch(`${baseUrl}/v1/campaign/${id}`, { headers: { authorization: `Bearer ${token}` } });
  if (response.status === 404) return undefined;
  if (response.status !== 200) throw new Error(`summary answered ${response.status}`);
  return (await response.json()) as Summary;
}

export async function until<T>(read: () => Promise<T> | T, done: (value: T) => boolean, timeoutMs: number, what: string): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; last: ${JSON.stringify(value)?.slice(0, 500)}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/**
 * Runs `read` against the gateway's SQLite file through a second, read-only connection (the
 * gateway may still be running: WAL lets it go on writing) and closes it whatever happens.
 */
export function readDatabase<T>(path: string, read: (db: Database.Database) => T): T {
  const db = new Database(path, { readonly: true });
  try {
    return read(db);
  } finally {
    db.close();
  }
}

/** The last webhook body the receiver got for each `To`: a recipient's final status (webhooks may repeat). */
export function lastBodyByTo<T extends { To: string }>(bodies: readonly T[]): Map<string, T> {
  const byTo = new Map<string, T>();
  for (const body of bodies) byTo.set(body.To, body);
  return byTo;
}

/**
 * Every recipient's final receipt reached the receiver, signed (webhooks are at-least-once, so a
 * duplicate may come too): once one distinct body per recipient has arrived, the last body for each
 * number carries its final status and the ClientReference `c<index>` it was sent with.
 */
export async function expectFinalWebhooks(
  receiver: WebhookReceiver,
  msisdns: readonly string[],
  expected: { from: string; statusFor: (msisdn: string) => string; timeoutMs: number },
): Promise<void> {
  await receiver.waitUntil(() => new Set(receiver.requests.map((r) => r.rawBody.toString('utf8'))).size >= msisdns.length, expected.timeoutMs, 'one webhook per recipient');
  expect(receiver.signatureFailures).toBe(0);
  const finalByTo = lastBodyByTo(receiver.bodies() as { To: string; Status: string; ClientReference: string | null }[]);
  expect(finalByTo.size).toBe(msisdns.length);
  msisdns.forEach((msisdn, i) => {
    expect(finalByTo.get(msisdn)).toEqual({ To: msisdn, From: expected.from, Status: expected.statusFor(msisdn), ClientReference: `c${i}` });
  });
}

/** The API base URL of a started in-process gateway; throws if it is not listening. */
export function baseUrlOf(gateway: { address(): { host: string; port: number } | undefined }): string {
  const where = gateway.address();
  if (where === undefined) throw new Error('the gateway is not listening (start() it first)');
  return `http://${where.host}:${where.port}`;
}

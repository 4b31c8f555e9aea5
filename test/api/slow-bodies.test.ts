/**
 * One client's slow uploads cannot lock the others out. Over a real server and a real SQLite file:
 * client A trickles bodies (a byte every 300 ms on raw sockets, declaring 200 kB each, reopening at
 * once when cut, as an attacker does) while client B posts one-recipient campaigns. A's bodies are
 * cut with 408 once they fall under api.minBodyBytesPerSecond after api.bodyRateGraceMs (long before
 * Node's 300 s request timeout), A's fifth concurrent upload is refused with 429 (api.maxUploadsPerClient),
 * and every one of B's requests is accepted. The total bound (api.maxBufferedBytes) still answers
 * 503 past it: large-requests.test.ts.
 */
import { connect, type Socket } from 'node:net';
import { performance } from 'node:perf_hooks';
import { afterEach, describe, expect, it } from 'vitest';
import { startApiFixture, type ApiFixture } from '../support/api-fixture.js';

const MAX_BUFFERED_BYTES = 1_000_000;
const LIMITS = { maxBufferedBytesPerClient: 800_000, maxUploadsPerClient: 4, minBodyBytesPerSecond: 1_000, bodyRateGraceMs: 2_000 };
/** What each of A's slow uploads declares: four of them are A's whole share, five would fill the total. */
const DECLARED_BYTES = 200_000;
const TRICKLE_INTERVAL_MS = 300;
/** Slack over the grace for the check interval and a loaded machine; still far below Node's 300 s. */
const CUT_SLACK_MS = 5_000;
/** A's uploads cut before the attack stops: each of the four slots cut twice. */
const CUTS_WANTED = 8;

let fixture: ApiFixture | undefined;
const sockets: Socket[] = [];
afterEach(async () => {
  for (const socket of sockets.splice(0)) socket.destroy();
  await fixture?.close();
  fixture = undefined;
});

interface Answer {
  status: number;
  head: string;
  body: string;
  afterMs: number;
}

/**
 * A POST /v1/campaign on a raw socket that declares `declaredBytes` and sends one byte every
 * TRICKLE_INTERVAL_MS; resolves with the answer (status 0 if the connection ended without one).
 */
function slowUpload(port: number, token: string, declaredBytes: number): Promise<Answer> {
  return new Promise((resolve) => {
    const startedMs = performance.now();
    const socket = connect(port, '127.0.0.1');
    sockets.push(socket);
    let received = '';
    let settled = false;
    const trickle = setInterval(() => {
      if (socket.writable) socket.write(' ');
    }, TRICKLE_INTERVAL_MS);
    const settle = (): void => {
      if (settled) return;
      settled = true;
      clearInterval(trickle);
      const end = received.indexOf('\r\n\r\n');
      const head = end === -1 ? received : received.slice(0, end);
      const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1] ?? 0);
      resolve({ status, head, body: end === -1 ? '' : received.slice(end + 4), afterMs: performance.now() - startedMs });
      socket.destroy();
    };
    socket.on('data', (chunk: Buffer) => {
      received += chunk.toString('utf8');
      const end = received.indexOf('\r\n\r\n');
      const length = Number(/content-length: (\d+)/i.exec(received)?.[1] ?? -1);
      if (end !== -1 && length >= 0 && received.length >= end + 4 + length) settle();
    });
    socket.on('error', settle);
    socket.on('close', settle);
    socket.write(`POST /v1/campaign HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${token}\r\nContent-Type: application/json\r\nContent-Length: ${declaredBytes}\r\n\r\n{`);
  });
}

const oneRecipient = { text: 'Hello', from: 'Acme', recipientInfo: [{ msisdn: '353861234567' }] };

describe('slow request bodies from one client', () => {
  it('are cut with 408 within the deadline, a fifth concurrent one is 429, and another client is served throughout', async () => {
    fixture = await startApiFixture({ startProcessor: false, maxBodyBytes: MAX_BUFFERED_BYTES, maxBufferedBytes: MAX_BUFFERED_BYTES, bodyLimits: LIMITS });
    const a = await fixture.createAccount({ clientName: 'attacker', username: 'attacker-admin' });
    const b = await fixture.createAccount({ clientName: 'bystander', username: 'bystander-admin' });
    const c = await fixture.createAccount({ clientName: 'prober', username: 'prober-admin' });
    const port = Number(new URL(fixture.baseUrl).port);

    // The attack: four slow uploads, each reopened at once when it is cut.
    const cuts: Answer[] = [];
    let attacking = true;
    const slot = async (): Promise<void> => {
      while (attacking) cuts.push(await slowUpload(port, a.token, DECLARED_BYTES));
    };
    const slots = Array.from({ length: LIMITS.maxUploadsPerClient }, () => slot());

    // A's four are admitted once a 250 kB request from a third client no longer fits in the total
    // (4 x 200 kB held); three admitted would leave room for it.
    const probe = { ...oneRecipient, padding: 'p'.repeat(250_000) };
    const probeDeadline = Date.now() + 10_000;
    let probeStatus = 0;
    while (probeStatus !== 503 && Date.now() < probeDeadline) probeStatus = (await fixture.postCampaign(c.token, probe)).status;
    expect(probeStatus, 'A holds four uploads').toBe(503);

    // Answered at once (before any of its body is read), or it would be cut like the others: bounded.
    const fifth = await Promise.race([
      slowUpload(port, a.token, DECLARED_BYTES),
      new Promise<Answer>((resolve) => setTimeout(() => resolve({ status: 0, head: 'no answer', body: '', afterMs: Infinity }), LIMITS.bodyRateGraceMs + CUT_SLACK_MS).unref()),
    ]);
    console.log(`A's fifth concurrent upload: ${fifth.status} after ${Math.round(fifth.afterMs)} ms`);
    expect(fifth.status).toBe(429);
    expect(fifth.head).toMatch(/\r\ncontent-type: application\/problem\+json/i);
    expect(fifth.head).toMatch(/\r\nretry-after: \d+/i);
    expect(JSON.parse(fifth.body)).toMatchObject({ status: 429, title: 'Too Many Requests', detail: expect.stringContaining('api.maxUploadsPerClient') });

    // B posts one-recipient campaigns for as long as the attack lasts.
    const bStatuses: number[] = [];
    const attackDeadline = Date.now() + 60_000;
    while (cuts.length < CUTS_WANTED && Date.now() < attackDeadline) bStatuses.push((await fixture.postCampaign(b.token, oneRecipient)).status);
    attacking = false;
    for (const socket of sockets) socket.destroy();
    await Promise.all(slots);

    const accepted = bStatuses.filter((status) => status === 202).length;
    const cutAfter = cuts.slice(0, CUTS_WANTED).map((cut) => Math.round(cut.afterMs));
    console.log(`B: ${accepted} of ${bStatuses.length} accepted (${((100 * accepted) / bStatuses.length).toFixed(1)}%); ` +
      `A's uploads cut after (ms): ${cutAfter.join(', ')}; deadline ${LIMITS.bodyRateGraceMs} ms + ${CUT_SLACK_MS} ms slack`);
    expect(cuts.length).toBeGreaterThanOrEqual(CUTS_WANTED);
    expect(bStatuses.length).toBeGreaterThan(0);
    expect(accepted).toBe(bStatuses.length);
    for (const cut of cuts.slice(0, CUTS_WANTED)) {
      expect(cut.status).toBe(408);
      expect(cut.head).toMatch(/\r\ncontent-type: application\/problem\+json/i);
      expect(cut.head).toMatch(/\r\nconnection: close/i);
      expect(JSON.parse(cut.body)).toMatchObject({ status: 408, title: 'Request Timeout', detail: expect.stringContaining('api.minBodyBytesPerSecond') });
      expect(cut.afterMs).toBeGreaterThanOrEqual(LIMITS.bodyRateGraceMs - 50);
      expect(cut.afterMs).toBeLessThan(LIMITS.bodyRateGraceMs + CUT_SLACK_MS);
    }
  }, 90_000);
});

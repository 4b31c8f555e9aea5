/**
 * Webhooks survive an outage without an operator. A real receiver fails (503s, or
 * connection refused with its server closed) for longer than a whole retry series, then recovers;
 * the sender runs on the spec's numbers (SPEC "Events" 6-7: retries 2, 4 and 8 s after each failure,
 * breaker open 30 s after two transient failures) on a clock the test steps.
 */
import { createHmac } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { run as webhookCli } from '../../src/cli/commands/webhook.js';
import { silentLogger } from '../../src/common/log.js';
import { openStore, type Store } from '../../src/store/sqlite/database.js';
import { defaultKeyFileFor, SecretBox } from '../../src/store/secret-box.js';
import { DEFAULT_WEBHOOK_CONFIG, enqueueDeliveryReceipt, WebhookSender } from '../../src/webhooks/index.js';
import { captureCliOutput } from '../support/cli-output.js';
import { ManualClock } from '../support/manual-clock.js';
import { WebhookReceiver, type ScriptedResponse } from '../support/webhook-receiver.js';
import { freePort } from '../support/free-port.js';

const T0 = 1_800_000_000_000;
const SECRET = 'whsec-redrive';
const WINDOW_MS = DEFAULT_WEBHOOK_CONFIG.redriveWithinMs;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

interface Step { atMs: number; attempts: number; state: string }
interface Seen { atMs: number; to: string; eventId: string | undefined; signature: string | undefined; body: string }


describe('automatic redrive after a receiver outage (spec timings, stepped clock)', () => {
  let dir: string;
  let dbPath: string;
  let store: Store;
  let box: SecretBox;
  let clock: ManualClock;
  const receivers: WebhookReceiver[] = [];
  const senders: WebhookSender[] = [];
  /** Per outbox id, each change of (attempts, state) with the clock time it was seen at. */
  let timeline: Map<number, Step[]>;
  let seen: Seen[];

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'smsgate-redrive-'));
    dbPath = join(dir, 'gate.sqlite');
    store = await openStore({ path: dbPath, synchronous: 'NORMAL' });
    box = SecretBox.fromKeyFile(defaultKeyFileFor(dbPath));
    clock = new ManualClock(T0);
    timeline = new Map();
    seen = [];
  });
  afterEach(async () => {
    for (const s of senders.splice(0)) await s.stop();
    for (const r of receivers.splice(0)) await r.close();
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('runs on the spec numbers', () => {
    expect(DEFAULT_WEBHOOK_CONFIG).toMatchObject({ retryDelaysMs: [2_000, 4_000, 8_000], breakerOpenMs: 30_000, breakerFailures: 2, redriveWithinMs: 86_400_000 });
  });

  /** A receiver that records each request with the stepped clock's time, answering with `answer`. */
  const receiver = async (answer: (to: string) => ScriptedResponse | undefined, port?: number) => {
    const r = await WebhookReceiver.start({ secret: SECRET, ...(port === undefined ? {} : { port }) });
    r.respondWith((request) => {
      const body = request.rawBody.toString('utf8');
      const to = (JSON.parse(body) as { To: string }).To;
      const header = (name: string) => {
        const value = request.headers[name];
        return Array.isArray(value) ? value[0] : value;
      };
      seen.push({ atMs: clock.now(), to, eventId: header('x-event-id'), signature: header('x-signature'), body });
      return answer(to);
    });
    receivers.push(r);
    return r;
  };
  const addClient = (name: string, url: string) =>
    Number(store.db.prepare('INSERT INTO clients (name, webhook_url, webhook_secret_enc, created_at) VALUES (?, ?, ?, 0)')
      .run(name, url, box.seal(SECRET)).lastInsertRowid);
  let campaignSeq = 0;
  /** Queues one receipt created at createdAtMs; returns the outbox id. */
  const queue = (clientId: number, to: string, createdAtMs = clock.now()): number => {
    const campaignId = `00000000-0000-4000-8000-${String(++campaignSeq).padStart(12, '0')}`;
    store.db.prepare(`INSERT INTO campaigns (id, client_id, state, name, sender, text, created_at) VALUES (?, ?, 'ready', 'n', 'Gate', 't', 0)`).run(campaignId, clientId);
    const recipientId = Number(store.db.prepare('INSERT INTO recipients (campaign_id, msisdn) VALUES (?, ?)').run(campaignId, to).lastInsertRowid);
    expect(enqueueDeliveryReceipt(store.db, { clientId, recipientId, to, from: 'Gate', status: 'DELIVRD', clientReference: null }, createdAtMs)).toBe(true);
    return Number(store.db.prepare('SELECT MAX(id) FROM webhook_outbox').pluck().get());
  };
  /** A dead letter left by an earlier run: created and dead at the given times, died of a 503 at url. */
  const earlierDeadLetter = (clientId: number, to: string, createdAtMs: number, deadAtMs: number, url: string): number => {
    const id = queue(clientId, to, createdAtMs);
    store.db.prepare(`UPDATE webhook_outbox SET state = 'dead', attempts = 4, last_error = 'HTTP_503', dead_at = ?, dead_reason = 'transient', dead_url = ? WHERE id = ?`)
      .run(deadAtMs, url, id);
    return id;
  };
  const row = (id: number) => store.db.prepare('SELECT * FROM webhook_outbox WHERE id = ?').get(id) as
    { state: string; attempts: number; last_error: string | null; dead_reason: string | null; event_id: string; body: string };
  const sender = () => {
    const s = new WebhookSender({
      store, secretBox: box, logger: silentLogger(), config: DEFAULT_WEBHOOK_CONFIG, clock, pollIntervalMs: 1_000, flushIntervalMs: 1,
    });
    senders.push(s);
    return s;
  };

  const dueNow = () => store.db.prepare(`SELECT COUNT(*) FROM webhook_outbox WHERE state = 'pending' AND next_attempt_at <= ?`).pluck().get(clock.now()) as number;
  /**
   * Waits (real time, bounded) until no row due by the stepped clock is left unsettled (a row in flight
   * or awaiting its write is still pending), then notes every row whose attempts or state changed.
   */
  const settle = async () => {
    await vi.waitFor(() => expect(dueNow()).toBe(0), { timeout: 15_000, interval: 2 });
    note();
  };
  const note = () => {
    for (const r of store.db.prepare('SELECT id, attempts, state FROM webhook_outbox').all() as { id: number; attempts: number; state: string }[]) {
      const steps = timeline.get(r.id) ?? [];
      const last = steps[steps.length - 1];
      if (last === undefined || last.attempts !== r.attempts || last.state !== r.state) steps.push({ atMs: clock.now() - T0, attempts: r.attempts, state: r.state });
      timeline.set(r.id, steps);
    }
  };
  /** Steps the clock from timer to timer, settling after each, until done() or the clock passes untilMs. */
  const runUntil = async (done: () => boolean, untilMs: number, beforeStep: () => Promise<void> = async () => {}) => {
    for (;;) {
      await settle();
      if (done()) return;
      const next = clock.nextTimerAtMs();
      if (next === null || next > T0 + untilMs) throw new Error(`not done by T0+${untilMs} ms`);
      await beforeStep();
      clock.advanceToNextTimer();
    }
  };
  const requestsTo = (to: string) => seen.filter((q) => q.to === to);

  it('503s for longer than a retry series: every event ends delivered with no operator, each series on the 2/4/8 s schedule', async () => {
    const BLIP_MS = 20_000;
    const PERMANENT = '353870000100';
    const AGAIN = '353870000101';
    let againFailed = false;
    let refusePermanent = true;
    const r = await receiver((to) => {
      if (to === PERMANENT && refusePermanent) return { kind: 'status', statusCode: 400 };
      if (clock.now() < T0 + BLIP_MS) return { kind: 'status', statusCode: 503 };
      // One redriven event fails its first attempt again: its series starts over at 2 s.
      if (to === AGAIN && !againFailed) {
        againFailed = true;
        return { kind: 'status', statusCode: 503 };
      }
      return undefined;
    });
    const clientId = addClient('acme', r.url);
    // Dead letters of an earlier run: one too old to redrive (created and dead over 24 h ago), one young enough.
    const tooOld = earlierDeadLetter(clientId, '353870000001', T0 - WINDOW_MS - 60_000, T0 - WINDOW_MS - 1_000, r.url);
    const young = earlierDeadLetter(clientId, '353870000002', T0 - WINDOW_MS + 60_000, T0 - WINDOW_MS + 120_000, r.url);
    const permanent = queue(clientId, PERMANENT);
    const events = Array.from({ length: 19 }, (_, i) => queue(clientId, i === 0 ? AGAIN : `3538700002${String(i).padStart(2, '0')}`));
    const again = events[0] as number;
    note();
    const s = sender();
    s.start();
    await runUntil(() => [young, ...events].every((id) => row(id).state === 'delivered'), 120_000);

    // The first series of every event: attempts at 0, 2, 6 and 14 s (2, 4, 8 s after each failure),
    // a dead letter after the fourth; then, at the probe 30 s after the first (one breaker window),
    // redriven as a fresh series (attempt count from 1 again).
    const firstSeries = [{ atMs: 0, attempts: 1, state: 'pending' }, { atMs: 2_000, attempts: 2, state: 'pending' },
      { atMs: 6_000, attempts: 3, state: 'pending' }, { atMs: 14_000, attempts: 4, state: 'dead' }];
    for (const id of events.slice(1)) {
      expect(timeline.get(id), `event ${id}`).toEqual([{ atMs: 0, attempts: 0, state: 'pending' }, ...firstSeries, { atMs: 30_000, attempts: 1, state: 'delivered' }]);
    }
    // The redriven series starts over: its first retry comes 2 s after its failure, not 8.
    expect(timeline.get(again)).toEqual([{ atMs: 0, attempts: 0, state: 'pending' }, ...firstSeries,
      { atMs: 30_000, attempts: 1, state: 'pending' }, { atMs: 32_000, attempts: 2, state: 'delivered' }]);
    // The young dead letter was the probe: once at the start (still failing), once a breaker window later.
    expect(timeline.get(young)).toEqual([{ atMs: 0, attempts: 4, state: 'dead' }, { atMs: 0, attempts: 1, state: 'dead' }, { atMs: 30_000, attempts: 1, state: 'delivered' }]);
    expect(requestsTo('353870000002').map((q) => q.atMs - T0)).toEqual([0, 30_000]);
    expect(s.stats()).toMatchObject({ probes: 2, redriven: 19 });
    // Between the first attempts and the probe, a breaker window later, the receiver saw nothing:
    // the retries failed fast on the open breaker and no probe came early.
    expect(seen.filter((q) => q.atMs > T0 && q.atMs < T0 + 30_000)).toEqual([]);

    // A permanent refusal stays dead: one request, never redriven.
    expect(row(permanent)).toMatchObject({ state: 'dead', attempts: 1, last_error: 'HTTP_400', dead_reason: 'permanent' });
    expect(requestsTo(PERMANENT)).toHaveLength(1);
    // Older than webhooks.redriveWithinMs: not redriven, not used as the probe.
    expect(row(tooOld)).toMatchObject({ state: 'dead', attempts: 4, last_error: 'HTTP_503', dead_reason: 'transient' });
    expect(requestsTo('353870000001')).toHaveLength(0);

    // The operator replays the dead letters (`smsgate webhook replay`) once the receiver takes the refused one.
    await s.stop();
    refusePermanent = false;
    const configPath = join(dir, 'config.json');
    writeFileSync(configPath, JSON.stringify({
      database: { path: dbPath }, api: { host: '127.0.0.1', port: await freePort() },
      transports: [{ name: 'sim', type: 'simulator' }], logging: { level: 'silent' },
    }));
    const replay = await captureCliOutput(() => webhookCli(['replay', '--client', 'acme', '--now', '--config', configPath, '--json']));
    expect(replay.code).toBe(0);
    expect(JSON.parse(replay.stdout)).toMatchObject({ requeued: 2, delivered: 2, dead: 0, pending: 0 });
    expect(row(permanent).state).toBe('delivered');
    expect(requestsTo(PERMANENT)).toHaveLength(2);

    // X-Event-Id: one per event, the row's, on the first attempt, every retry, the redrive and the replay.
    const all = [tooOld, young, permanent, ...events];
    const ids = new Set<string>();
    for (const id of all) {
      const { event_id: eventId, body } = row(id);
      expect(eventId).toMatch(UUID);
      const to = (JSON.parse(body) as { To: string }).To;
      const requests = requestsTo(to);
      expect(requests.length).toBeGreaterThan(0);
      for (const q of requests) {
        expect(q.eventId).toBe(eventId);
        // The signature is still the HMAC of the raw body alone, the same on every request of the event.
        expect(q.body).toBe(body);
        expect(q.signature).toBe(`sha256=${createHmac('sha256', SECRET).update(Buffer.from(body, 'utf8')).digest('hex')}`);
      }
      ids.add(eventId);
    }
    expect(ids.size).toBe(all.length);
    expect(requestsTo(AGAIN).map((q) => q.atMs - T0)).toEqual([0, 30_000, 32_000]);
    expect(r.signatureFailures).toBe(0);
  }, 60_000);
  it('connection refused (the receiver closed) for longer than a retry series: redriven once it listens again', async () => {
    const first = await receiver(() => undefined);
    const url = first.url;
    const port = Number(new URL(url).port);
    await first.close();
    receivers.splice(receivers.indexOf(first), 1);
    const clientId = addClient('refused', url);
    const events = Array.from({ length: 5 }, (_, i) => queue(clientId, `35387000030${i}`));
    note();
    const s = sender();
    s.start();
    let back = false;
    const firstErrors = new Set<string | null>();
    // The receiver listens again on the same port 20 s in, after every series has ended (14 s).
    await runUntil(() => events.every((id) => row(id).state === 'delivered'), 120_000, async () => {
      if (clock.now() === T0) for (const id of events) firstErrors.add(row(id).last_error);
      if (!back && (clock.nextTimerAtMs() ?? 0) >= T0 + 20_000) {
        expect(firstErrors).toContain('ECONNREFUSED');
        expect(events.map((id) => row(id).state)).toEqual(events.map(() => 'dead'));
        // The breaker opened on the second refusal: the last retries failed fast.
        expect(events.map((id) => row(id).last_error)).toEqual(events.map(() => 'CIRCUIT_OPEN'));
        expect(events.map((id) => row(id).dead_reason)).toEqual(events.map(() => 'transient'));
        await receiver(() => undefined, port);
        back = true;
      }
    });
    for (const id of events) {
      expect(timeline.get(id)).toEqual([{ atMs: 0, attempts: 0, state: 'pending' }, { atMs: 0, attempts: 1, state: 'pending' },
        { atMs: 2_000, attempts: 2, state: 'pending' }, { atMs: 6_000, attempts: 3, state: 'pending' }, { atMs: 14_000, attempts: 4, state: 'dead' },
        // Probed when the breaker (open since the second refusal at 0 s) lets its trial through at
        // 30 s, sooner than a window after the first dead letter (14 s + 30 s); its 2xx redrives the rest.
        { atMs: 30_000, attempts: 1, state: 'delivered' }]);
    }
    expect(seen.map((q) => q.atMs - T0)).toEqual(events.map(() => 30_000));
    expect(s.stats()).toMatchObject({ probes: 1, redriven: 4 });
  }, 60_000);

  it('a 2xx for another event redrives the endpoint at once, without waiting for the probe', async () => {
    const DOWN = '353870000400';
    let down = true;
    const r = await receiver((to) => (to === DOWN && down ? { kind: 'status', statusCode: 500 } : undefined));
    const clientId = addClient('live', r.url);
    const dead = queue(clientId, DOWN);
    note();
    // A breaker that does not open, so the dead letter's probe is a whole window after its death (44 s).
    const s = new WebhookSender({
      store, secretBox: box, logger: silentLogger(), config: { ...DEFAULT_WEBHOOK_CONFIG, breakerFailures: 100 }, clock, pollIntervalMs: 1_000, flushIntervalMs: 1,
    });
    senders.push(s);
    s.start();
    await runUntil(() => row(dead).state === 'dead', 20_000);
    expect(timeline.get(dead)?.map((step) => step.atMs)).toEqual([0, 0, 2_000, 6_000, 14_000]);
    expect(row(dead)).toMatchObject({ attempts: 4, last_error: 'HTTP_500', dead_reason: 'transient' });
    down = false;
    // New traffic 20 s in is delivered, and the dead letter comes with it, 24 s before its probe.
    clock.advanceTo(T0 + 20_000);
    const live = queue(clientId, '353870000401');
    s.wake();
    await runUntil(() => row(dead).state === 'delivered', 40_000);
    expect(row(live).state).toBe('delivered');
    expect(timeline.get(dead)?.at(-1)).toEqual({ atMs: 20_000, attempts: 1, state: 'delivered' });
    expect(requestsTo(DOWN).map((q) => q.atMs - T0)).toEqual([0, 2_000, 6_000, 14_000, 20_000]);
    expect(s.stats()).toMatchObject({ probes: 0, redriven: 1 });
  }, 60_000);

  it('redriveWithinMs 0 turns redrive off: the dead letters wait for an operator', async () => {
    let down = true;
    const r = await receiver(() => (down ? { kind: 'status', statusCode: 503 } : undefined));
    const clientId = addClient('off', r.url);
    const id = queue(clientId, '353870000500');
    note();
    const s = new WebhookSender({
      store, secretBox: box, logger: silentLogger(), config: { ...DEFAULT_WEBHOOK_CONFIG, redriveWithinMs: 0 }, clock, pollIntervalMs: 1_000, flushIntervalMs: 1,
    });
    senders.push(s);
    s.start();
    await runUntil(() => row(id).state === 'dead', 20_000);
    down = false;
    await runUntil(() => clock.now() >= T0 + 100_000, 101_000);
    expect(row(id).state).toBe('dead');
    expect(requestsTo('353870000500')).toHaveLength(2);
    expect(s.stats()).toMatchObject({ probes: 0, redriven: 0 });
  }, 60_000);
});

/**
 * Bounds on inbound parts and the reassembly sweep, against real `smsgate serve` children fed over
 * real SMPP on loopback by the test SMSC (the smpp package's server):
 *  - first parts of concatenated MOs that never complete are refused with ESME_RX_T_APPN over
 *    inbound.maxPartsPerOriginator and inbound.maxParts, the part that completes a group is still
 *    taken, and the refusals are one summary line, not one per PDU;
 *  - 20,000 groups left incomplete (first parts with random references from 100 originators) are
 *    swept by a restarted gateway in slices: no event-loop turn of 50 ms or more (the main thread's
 *    CPU time between two ticks of a 5 ms timer, measured inside the gateway by loop-probe.mjs, so
 *    the time the thread waits for a core on a shared machine does not count), /health answers
 *    throughout, one warning line for the sweep, and one outbox row (the inbound webhook) per message.
 */
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { InboundAdmin } from '../../src/inbound/inbound-admin.js';
import { buildUdh, encodeGsm7Septets } from '../../src/sms/index.js';
import { concatIe } from '../../src/sms/udh.js';
import { openStore } from '../../src/store/sqlite/database.js';
import { InboundStore } from '../../src/store/sqlite/inbound-store.js';
import { sqliteStorePorts } from '../../src/store/store-ports.js';
import { readDatabase, tempDir, until } from '../e2e/e2e-setup.js';
import { GatewayProcess, seedAccount, writeGatewayConfig } from '../support/gateway-process.js';
import { TestSmsc } from '../support/smsc/test-smsc.js';
import { WebhookReceiver } from '../support/webhook-receiver.js';

const UDHI = 0x40;
/** SMPP 3.4 §5.1.3: ESME Receiver Temporary App Error Code. */
const ESME_RX_T_APPN = 0x64;
const SHORT_CODE = '50123';

let dir: string | undefined;
let smsc: TestSmsc | undefined;
let receiver: WebhookReceiver | undefined;
const gateways: GatewayProcess[] = [];

afterEach(async () => {
  for (const gateway of gateways.splice(0)) gateway.kill('SIGKILL');
  await receiver?.close();
  await smsc?.stop();
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  receiver = undefined;
  smsc = undefined;
  dir = undefined;
});

function config(directory: string, s: TestSmsc, extra: Record<string, unknown>): Record<string, unknown> {
  return {
    database: { path: join(directory, 'smsgate.sqlite') },
    api: { host: '127.0.0.1', port: 0 },
    logging: { level: 'info' },
    engine: { pollIntervalMs: 50, drainTimeoutMs: 1_000 },
    transports: [{ name: 'carrier', type: 'smpp', ...s.address, systemId: 'esme', password: 'secret', bindMode: 'transceiver', reconnect: { initialDelayMs: 100, maxDelayMs: 500 } }],
    routes: [{ prefix: '', transport: 'carrier' }],
    ...extra,
  };
}

/** Client acme with an inbound webhook to `url` (when given) and the route for SHORT_CODE. */
async function seedRoute(databasePath: string, written: Parameters<typeof seedAccount>[0], url: string | undefined): Promise<void> {
  await seedAccount(written);
  const store = await openStore({ path: databasePath });
  try {
    const admin = new InboundAdmin(sqliteStorePorts(store).inbound);
    await admin.addRoute('acme', SHORT_CODE);
    if (url !== undefined) await admin.setInboundWebhook('acme', url);
  } finally {
    await store.close();
  }
}

/** Part `sequence` of `total` of a GSM-7 message with a 16-bit UDH reference, as short_message octets. */
function part(reference: number, total: number, sequence: number, text: string): Buffer {
  return Buffer.concat([Buffer.from(buildUdh([concatIe(reference, total, sequence, 16)])), Buffer.from(encodeGsm7Septets(text))]);
}

function deliver(s: TestSmsc, from: string, shortMessage: Buffer): Promise<number> {
  return s.sendDeliverSm({ source_addr: from, destination_addr: SHORT_CODE, esm_class: UDHI, data_coding: 0, short_message: shortMessage });
}

async function bound(s: TestSmsc): Promise<void> {
  await until(() => s.boundSessions().length, (n) => n > 0, 15_000, 'the gateway bound to the SMSC');
}

function partsHeld(path: string): number {
  return readDatabase(path, (db) => db.prepare('SELECT COUNT(*) FROM inbound_parts').pluck().get() as number);
}

interface LogLine {
  level?: number;
  msg?: string;
  [field: string]: unknown;
}

function jsonLines(lines: readonly string[]): LogLine[] {
  return lines.flatMap((line) => {
    try {
      return [JSON.parse(line) as LogLine];
    } catch {
      return [];
    }
  });
}

/** What test/inbound/loop-probe.mjs reports from inside the gateway. */
interface LoopProbe {
  seq: number;
  resets: number;
  maxCpuMs: number;
  maxGapMs: number;
  ticks: number;
}

const LOOP_PROBE = fileURLToPath(new URL('./loop-probe.mjs', import.meta.url));

describe('inbound part bounds and the reassembly sweep', () => {
  it('refuses first parts over the per-originator and total bounds with ESME_RX_T_APPN, still takes a completing part, and logs a summary, not a line per refused PDU', async () => {
    dir = tempDir('inbound-bounds');
    smsc = await TestSmsc.start();
    const written = writeGatewayConfig(dir, config(dir, smsc, { inbound: { maxPartsPerOriginator: 255, maxParts: 300 } }));
    await seedRoute(written.config.database.path, written.config, undefined);
    const gateway = await GatewayProcess.spawn(written.path);
    gateways.push(gateway);
    await bound(smsc);

    const phone = '353861000001';
    const first: number[] = [];
    for (let reference = 0; reference < 255; reference++) first.push(await deliver(smsc, phone, part(reference, 2, 1, `first ${reference}`)));
    expect(first.every((status) => status === 0)).toBe(true);
    // The originator holds 255 parts: a new group's first part is refused, temporarily.
    expect(await deliver(smsc, phone, part(1_000, 2, 1, 'one too many'))).toBe(ESME_RX_T_APPN);
    // The part that completes a held group is taken (it frees the group's parts)...
    expect(await deliver(smsc, phone, part(7, 2, 2, ' and its end'))).toBe(0);
    const text = await until(
      () => readDatabase(written.config.database.path, (db) => db.prepare('SELECT text FROM inbound_messages').pluck().all() as string[]),
      (texts) => texts.length === 1, 5_000, 'the completed message');
    expect(text).toEqual(['first 7 and its end']);
    // ...and then the originator has room for one new group again.
    expect(await deliver(smsc, phone, part(1_001, 2, 1, 'room again'))).toBe(0);
    expect(await deliver(smsc, phone, part(1_002, 2, 1, 'full again'))).toBe(ESME_RX_T_APPN);
    // A burst of refused parts (a flood at the bound): every one refused, none stored.
    const burst = await Promise.all(Array.from({ length: 50 }, (_, i) => deliver(smsc as TestSmsc, phone, part(2_000 + i, 2, 1, 'flood'))));
    expect(burst.every((status) => status === ESME_RX_T_APPN)).toBe(true);

    // The gateway-wide bound: 255 held for the first phone, 45 more from others, then refused.
    const others: number[] = [];
    for (let i = 0; i < 46; i++) others.push(await deliver(smsc, `3538620000${String(i).padStart(2, '0')}`, part(i, 3, 1, 'other')));
    expect(others.slice(0, 45).every((status) => status === 0)).toBe(true);
    expect(others[45]).toBe(ESME_RX_T_APPN);
    expect(partsHeld(written.config.database.path)).toBe(300);

    const lines = jsonLines(gateway.logLines);
    expect(lines.filter((line) => line.msg === 'inbound part refused; asking the SMSC to retry later')).toHaveLength(0);
    const summaries = lines.filter((line) => typeof line.msg === 'string' && line.msg.startsWith('inbound parts refused'));
    // 53 refusals: the first is logged at once with its count; the rest wait for the next summary
    // (10 s on, at a refusal or after a sweep), never a line each.
    expect(summaries.length).toBeGreaterThanOrEqual(1);
    expect(summaries.length).toBeLessThanOrEqual(3);
    expect(summaries[0]?.['refused']).toEqual({ originator: 1, total: 0 });
    expect(lines.filter((line) => line.msg === 'inbound handler failed; asking the SMSC to retry')).toHaveLength(0);
  }, 120_000);

  // Tried up to three times: the bound is the gateway's own main-thread CPU between two 5 ms
  // ticks, and on this 2-core machine an unrelated stretch of kernel or collector work lands in one
  // such gap now and then (17-19 ms in most runs alone, 58 ms once). Each try is a fresh gateway.
  it('sweeps 20,000 incomplete groups after a restart with no event-loop turn of 50 ms, /health answering, one warning line and one outbox row each', { retry: 2, timeout: 300_000 }, async () => {
    dir = tempDir('inbound-sweep');
    smsc = await TestSmsc.start({ record: false });
    receiver = await WebhookReceiver.start({ keepBodies: false, keepRequests: false });
    const path = join(dir, 'smsgate.sqlite');
    const probeFile = join(dir, 'loop-probe.json');
    // Restarted with a 1 s reassembly timeout: every group the flood left is overdue at once.
    const written = writeGatewayConfig(dir, config(dir, smsc, { inbound: { reassemblyTimeoutMs: 1_000 } }));
    await seedRoute(path, written.config, receiver.url);
    // What the flood left (first parts of never-completed messages, random 16-bit references, 100
    // originators): 20,000 groups in the real database file, written as the store writes parts.
    // The flood itself over SMPP is the first test's (and is disk-bound: one commit per part).
    const store = await openStore({ path });
    try {
      const parts = new InboundStore(store.db);
      const firstPartAtMs = Date.now() - 60_000;
      store.db.transaction(() => {
        for (let p = 0; p < 100; p++) {
          const references = new Set<number>();
          while (references.size < 200) references.add(Math.floor(Math.random() * 65_536));
          for (const reference of references) {
            parts.insertPart({
              transport: 'carrier', sender: `3538630${String(p).padStart(5, '0')}`, recipient: SHORT_CODE, scheme: 'udh16', reference, total: 3, sequence: 1,
              coding: 'gsm7', body: 'never completed', raw: part(reference, 3, 1, 'never completed').toString('hex').toUpperCase(), received_at: firstPartAtMs,
            });
          }
        }
      })();
    } finally {
      await store.close();
    }
    expect(partsHeld(path)).toBe(20_000);

    const sweeping = await GatewayProcess.spawn(written.path, { nodeArgs: ['--import', LOOP_PROBE], env: { LOOP_PROBE_FILE: probeFile } });
    gateways.push(sweeping);
    const probe = (): LoopProbe | undefined => {
      try {
        return JSON.parse(readFileSync(probeFile, 'utf8')) as LoopProbe;
      } catch {
        return undefined;
      }
    };
    // From here on, what the probe sees is the sweep, not the start's module loading.
    process.kill(sweeping.pid, 'SIGUSR2');
    await until(probe, (state) => (state?.resets ?? 0) >= 1, 10_000, 'the loop probe reset');
    const partsAtReset = partsHeld(path);
    let healthAnswers = 0;
    let slowestHealthMs = 0;
    while (partsHeld(path) > 0) {
      const askedAt = performance.now();
      const response = await fetch(`${sweeping.baseUrl}/health`, { signal: AbortSignal.timeout(5_000) });
      expect(response.status).toBe(200);
      slowestHealthMs = Math.max(slowestHealthMs, performance.now() - askedAt);
      healthAnswers++;
    }
    const sweptBy = probe()?.seq ?? 0;
    const final = await until(probe, (state) => (state?.seq ?? 0) > sweptBy + 1, 10_000, 'a probe report after the sweep') as LoopProbe;
    console.log(`sweep: ${partsAtReset} of 20,000 parts left when measuring began; ${healthAnswers} /health answers during it, slowest ${slowestHealthMs.toFixed(1)} ms; ` +
      `longest loop turn ${final.maxCpuMs.toFixed(1)} ms of main-thread CPU (longest wall gap ${final.maxGapMs.toFixed(1)} ms on this shared machine), over ${final.ticks} ticks`);
    expect(partsAtReset).toBeGreaterThan(10_000);
    expect(healthAnswers).toBeGreaterThan(0);
    expect(final.maxCpuMs).toBeLessThan(50);

    const stored = readDatabase(path, (db) => ({
      messages: db.prepare('SELECT COUNT(*) FROM inbound_messages WHERE incomplete = 1').pluck().get(),
      outbox: db.prepare(`SELECT COUNT(*) FROM webhook_outbox WHERE kind = 'inbound'`).pluck().get(),
    }));
    expect(stored).toEqual({ messages: 20_000, outbox: 20_000 });
    const lines = jsonLines(sweeping.logLines);
    const sweepWarnings = lines.filter((line) => typeof line.msg === 'string' && line.msg.startsWith('inbound messages incomplete after the reassembly timeout'));
    expect(sweepWarnings).toHaveLength(1);
    expect(sweepWarnings[0]).toMatchObject({ delivered: 20_000, incomplete: 20_000, missingParts: 40_000 });
    expect(lines.filter((line) => (line.level ?? 0) >= 40).length).toBeLessThan(10);
    // The webhooks go out through the outbox (the sender's own thread) as the sweep commits them.
    await receiver.waitForCount(1, 30_000);
  });
});

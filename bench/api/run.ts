/**
 * bench:api — POST /v1/campaign latency (p50, p99) at 1, 1,000 and 100,000 recipients over real
 * HTTP on loopback with a real SQLite file (synchronous=FULL), the processing rate to ready
 * (recipients per second), and peak RSS. Prints a table; asserts nothing (the machine is shared).
 * Goals: 100,000 recipients accepted in under 1 s and ready in under 5 s.
 *
 * Then one POST of 1,000,000 recipients to a gateway in its own process (./million.ts), with
 * /health probed and the gateway's loop turns measured throughout; `--recipients N` runs only that,
 * at N recipients. Goals: accepted in at most 3 s, ready in at most 30 s, /health p99 under 100 ms,
 * no event-loop turn over 100 ms.
 *
 * `--credits [--concurrency N]`: instead, the credit reservation's cost (./credits.ts): the same
 * POSTs from a client with a balance and from an unlimited one, side by side.
 */
import { performance } from 'node:perf_hooks';
import { SqliteCreditLedger } from '../../src/store/sqlite/credit-ledger.js';
import { startApiFixture, type ApiFixture } from '../../test/support/api-fixture.js';
import { percentile } from '../e2e/stats.js';
import { runCreditsBench } from './credits.js';
import { printMillion, runMillion } from './million.js';

interface Row {
  case: string;
  requests: number;
  p50Ms: string;
  p99Ms: string;
  maxMs: string;
}

function campaignBody(recipients: number): string {
  const recipientInfo = Array.from({ length: recipients }, (_, i) => ({
    msisdn: `3538${String(i).padStart(8, '0')}`,
    ClientReference: `ref-${i}`,
  }));
  return JSON.stringify({ text: 'Bench message with some ordinary text in it.', from: 'Bench', recipientInfo });
}

async function postLatencies(fixture: ApiFixture, token: string, recipients: number, requests: number): Promise<{ row: Row; ids: string[] }> {
  const body = campaignBody(recipients);
  const latenciesMs: number[] = [];
  const ids: string[] = [];
  for (let i = 0; i < requests; i++) {
    const startedMs = performance.now();
    const res = await fixture.postCampaign(token, body);
    const json = (await res.json()) as { id: string };
    latenciesMs.push(performance.now() - startedMs);
    if (res.status !== 202) throw new Error(`POST answered ${res.status}`);
    ids.push(json.id);
  }
  latenciesMs.sort((a, b) => a - b);
  return {
    ids,
    row: {
      case: `POST ${recipients.toLocaleString('en')} recipient${recipients === 1 ? '' : 's'} (${(Buffer.byteLength(body) / 1024).toFixed(0)} KiB)`,
      requests,
      p50Ms: percentile(latenciesMs, 50).toFixed(1),
      p99Ms: percentile(latenciesMs, 99).toFixed(1),
      maxMs: latenciesMs[latenciesMs.length - 1]!.toFixed(1),
    },
  };
}

async function main(): Promise<void> {
  // The processor is driven by hand so that acceptance and processing are timed apart.
  const fixture = await startApiFixture({ startProcessor: false });
  try {
    const { token } = await fixture.createAccount({ senders: [{ name: 'Bench', type: 0 }] });
    const rows: Row[] = [];
    rows.push((await postLatencies(fixture, token, 1, 500)).row);
    rows.push((await postLatencies(fixture, token, 1_000, 100)).row);
    // The same requests from a client with a balance: each reserves its credits in the campaign's transaction.
    const paying = await fixture.createAccount({ senders: [{ name: 'Bench', type: 0 }] });
    const ledger = new SqliteCreditLedger(fixture.store.db);
    fixture.store.db.transaction(() => ledger.apply([{ clientId: paying.clientId, kind: 'top-up', credits: 1_000_000_000, campaignId: null, note: 'bench' }], Date.now())).immediate();
    for (const [recipients, requests] of [[1, 500], [1_000, 100]] as const) {
      const { row } = await postLatencies(fixture, paying.token, recipients, requests);
      rows.push({ ...row, case: `${row.case}, credits reserved` });
    }
    await fixture.processor.processOnce();
    const big = await postLatencies(fixture, token, 100_000, 5);
    rows.push(big.row);
    console.table(rows);

    // Processing: the five 100,000-recipient campaigns, one pass each, timed separately.
    const processing: Array<{ campaign: number; recipients: number; ms: string; recipientsPerSecond: string }> = [];
    for (let i = 0; i < big.ids.length; i++) {
      const startedMs = performance.now();
      const readyCount = await processOneCampaign(fixture);
      const elapsedMs = performance.now() - startedMs;
      if (readyCount !== 1) throw new Error('expected exactly one campaign per pass');
      processing.push({ campaign: i + 1, recipients: 100_000, ms: elapsedMs.toFixed(0), recipientsPerSecond: Math.round(100_000 / (elapsedMs / 1000)).toLocaleString('en') });
    }
    console.table(processing);

    // End to end: accepted (202) to ready, with the background processor woken by the accept.
    fixture.processor.start();
    const startedMs = performance.now();
    const res = await fixture.postCampaign(token, campaignBody(100_000));
    const acceptedMs = performance.now() - startedMs;
    const { id } = (await res.json()) as { id: string };
    while ((fixture.store.db.prepare('SELECT state FROM campaigns WHERE id = ?').get(id) as { state: string }).state !== 'ready') {
      await new Promise((r) => setTimeout(r, 5));
    }
    const readyMs = performance.now() - startedMs;
    await fixture.processor.stop();
    console.table([{ case: '100,000 recipients end to end', acceptedMs: acceptedMs.toFixed(0), readyMs: readyMs.toFixed(0) }]);
    console.log(`peak RSS: ${(process.resourceUsage().maxRSS / 1024).toFixed(0)} MiB`);
  } finally {
    await fixture.close();
  }
}

/** processOnce handles everything queued; the bench queues one campaign per pass by holding the others back. */
async function processOneCampaign(fixture: ApiFixture): Promise<number> {
  const db = fixture.store.db;
  const queued = db.prepare("SELECT id FROM campaigns WHERE state = 'queued' ORDER BY created_at, id").all() as Array<{ id: string }>;
  const [first, ...rest] = queued;
  if (first === undefined) return 0;
  const hold = db.prepare("UPDATE campaigns SET state = 'draft' WHERE id = ?");
  for (const { id } of rest) hold.run(id);
  const count = await fixture.processor.processOnce();
  const release = db.prepare("UPDATE campaigns SET state = 'queued' WHERE id = ?");
  for (const { id } of rest) release.run(id);
  return count;
}

const recipientsAt = process.argv.indexOf('--recipients');
if (process.argv.includes('--credits')) await runCreditsBench();
else if (recipientsAt >= 0) printMillion(await runMillion(Number(process.argv[recipientsAt + 1])));
else {
  await main();
  printMillion(await runMillion(1_000_000));
}

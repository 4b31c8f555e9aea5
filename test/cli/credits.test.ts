/**
 * `smsgate credits show|add|set|unlimited|history` and `smsgate client set-rate` through the CLI's
 * dispatcher (main(argv), as the installed command calls it; in this process, since a process per
 * command made this file the slowest of the CLI tests), each on a real SQLite file: what each prints
 * with --json, the ledger rows each writes, an unknown client (exit 1, nothing changed), bad numbers
 * (usage error, exit 2, nothing changed), and balance and reserved equal to the ledger's sums after
 * it all, with a reservation written beside the commands as the gateway's would be.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SqliteCreditLedger } from '../../src/store/sqlite/credit-ledger.js';
import { main } from '../../src/cli/main.js';
import { captureCliOutput } from '../support/cli-output.js';

const dir = mkdtempSync(join(tmpdir(), 'smsgate-credits-cli-'));
const configPath = join(dir, 'smsgate.json');
const dbPath = join(dir, 'gw.sqlite');
const cfg = ['--config', configPath];

interface Run { code: number; stdout: string; stderr: string }

/**
 * One command as the installed `smsgate` runs it: a thrown error is `smsgate: <message>` and exit 1.
 * Commands run one after another even when a test starts several at once: each captures this
 * process's stdout and stderr while it runs.
 */
let previous: Promise<unknown> = Promise.resolve();
function smsgate(...args: string[]): Promise<Run> {
  const run = previous.then(() => runOne(args));
  previous = run;
  return run;
}

function runOne(args: string[]): Promise<Run> {
  return captureCliOutput(async () => {
    try {
      return await main(args);
    } catch (err) {
      process.stderr.write(`smsgate: ${err instanceof Error ? err.message : String(err)}\n`);
      return 1;
    }
  });
}

async function json<T>(...args: string[]): Promise<T> {
  const run = await smsgate(...args, ...cfg, '--json');
  expect(run.stderr).toBe('');
  expect(run.code).toBe(0);
  return JSON.parse(run.stdout) as T;
}

/** Reads the file directly (another connection, as an auditor would). */
function query<T>(sql: string, ...params: unknown[]): T[] {
  const db = new Database(dbPath, { readonly: true });
  try {
    return db.prepare(sql).all(...params) as T[];
  } finally {
    db.close();
  }
}

/** The client's sums as stored, and as the ledger's rows add up by the kind rule. */
function sumsAndLedger(client: string): { stored: { balance: number; reserved: number }; ledger: { balance: number; reserved: number } } {
  const [stored] = query<{ balance: number; reserved: number }>(
    'SELECT balance, reserved FROM client_credits cc JOIN clients c ON c.id = cc.client_id WHERE c.name = ?', client);
  const [ledger] = query<{ balance: number; reserved: number }>(
    `SELECT COALESCE(SUM(CASE WHEN kind IN ('top-up', 'correction', 'charge') THEN credits ELSE 0 END), 0) AS balance,
            COALESCE(SUM(CASE WHEN kind IN ('reserve', 'release') THEN credits ELSE 0 END), 0) AS reserved
     FROM credit_ledger l JOIN clients c ON c.id = l.client_id WHERE c.name = ?`, client);
  return { stored: stored as { balance: number; reserved: number }, ledger: ledger as { balance: number; reserved: number } };
}

const ledgerRowCount = (): number => query<{ n: number }>('SELECT COUNT(*) AS n FROM credit_ledger')[0]?.n ?? -1;

type Account = { client: string; unlimited: boolean; balance: number; reserved: number; available: number };
type HistoryRow = { at: string; kind: string; credits: number; campaignId: string | null; note: string | null };

beforeAll(async () => {
  writeFileSync(configPath, JSON.stringify({ database: { path: dbPath } }));
  expect((await smsgate('migrate', ...cfg)).code).toBe(0);
  expect((await smsgate('client', 'create', '--name', 'acme', ...cfg)).code).toBe(0);
  expect((await smsgate('client', 'create', '--name', 'globex', ...cfg)).code).toBe(0);
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('smsgate credits', () => {
  it('shows a client that was never given credits as unlimited with zero sums', async () => {
    expect(await json<Account>('credits', 'show', '--client', 'acme')).toEqual({ client: 'acme', unlimited: true, balance: 0, reserved: 0, available: 0 });
    const text = await smsgate('credits', 'show', '--client', 'acme', ...cfg);
    expect(text).toEqual({ code: 0, stdout: 'client acme: unlimited (balance 0, reserved 0, available 0)\n', stderr: '' });
  });

  it('adds a top-up, takes off a negative correction, sets a balance, each a ledger row newest first', async () => {
    expect(await json<Account>('credits', 'add', '--client', 'acme', '--credits', '100', '--note', 'invoice 7'))
      .toEqual({ client: 'acme', unlimited: false, balance: 100, reserved: 0, available: 100 });
    expect(await json<Account>('credits', 'add', '--client', 'acme', '--credits', '-30'))
      .toEqual({ client: 'acme', unlimited: false, balance: 70, reserved: 0, available: 70 });
    expect(await json<Account>('credits', 'set', '--client', 'acme', '--credits', '50'))
      .toEqual({ client: 'acme', unlimited: false, balance: 50, reserved: 0, available: 50 });

    const history = await json<HistoryRow[]>('credits', 'history', '--client', 'acme');
    expect(history.map(({ at: _at, ...row }) => row)).toEqual([
      { kind: 'correction', credits: -20, campaignId: null, note: 'set to 50' },
      { kind: 'correction', credits: -30, campaignId: null, note: null },
      { kind: 'top-up', credits: 100, campaignId: null, note: 'invoice 7' },
    ]);
    for (const row of history) expect(row.at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    const times = history.map((row) => Date.parse(row.at));
    expect([...times].sort((a, b) => b - a)).toEqual(times);

    const limited = await json<HistoryRow[]>('credits', 'history', '--client', 'acme', '--limit', '2');
    expect(limited.map((row) => row.credits)).toEqual([-20, -30]);
    // Another client's account is its own.
    expect(await json<Account>('credits', 'show', '--client', 'globex')).toMatchObject({ unlimited: true, balance: 0 });
    expect(await json<HistoryRow[]>('credits', 'history', '--client', 'globex')).toEqual([]);
  });

  it('set with reserved credits changes the balance only: available is the new balance less what is reserved', async () => {
    // What the gateway's acceptance of a campaign writes: a reserve row, with its sums, in one transaction.
    const db = new Database(dbPath);
    try {
      db.pragma('busy_timeout = 5000');
      const clientId = (db.prepare('SELECT id FROM clients WHERE name = ?').get('acme') as { id: number }).id;
      const ledger = new SqliteCreditLedger(db);
      const reservation = db.transaction(() => ledger.reserve(clientId, 'c-1', 15, Date.now())).immediate();
      expect(reservation).toEqual({ outcome: 'reserved', credits: 15 });
    } finally {
      db.close();
    }
    expect(await json<Account>('credits', 'show', '--client', 'acme')).toEqual({ client: 'acme', unlimited: false, balance: 50, reserved: 15, available: 35 });
    expect(await json<Account>('credits', 'set', '--client', 'acme', '--credits', '200'))
      .toEqual({ client: 'acme', unlimited: false, balance: 200, reserved: 15, available: 185 });
    const [newest, reserve] = await json<HistoryRow[]>('credits', 'history', '--client', 'acme', '--limit', '2');
    expect(newest).toMatchObject({ kind: 'correction', credits: 150, campaignId: null, note: 'set to 200' });
    expect(reserve).toMatchObject({ kind: 'reserve', credits: 15, campaignId: 'c-1', note: null });
    const text = await smsgate('credits', 'history', '--client', 'acme', '--limit', '2', ...cfg);
    expect(text.stdout.split('\n')[0]).toMatch(/^at\s+kind\s+credits\s+campaign\s+note$/);
    expect(text.stdout).toContain('reserve     15       c-1');
  });

  it('unlimited writes no ledger row and keeps the sums; add then limits the client again', async () => {
    const rows = ledgerRowCount();
    expect(await json<Account>('credits', 'unlimited', '--client', 'acme'))
      .toEqual({ client: 'acme', unlimited: true, balance: 200, reserved: 15, available: 185 });
    expect(ledgerRowCount()).toBe(rows);
    expect(await json<Account>('credits', 'add', '--client', 'acme', '--credits', '5', '--note', 'back to a balance'))
      .toEqual({ client: 'acme', unlimited: false, balance: 205, reserved: 15, available: 190 });
    expect(ledgerRowCount()).toBe(rows + 1);
    // set ends unlimited too, even when the balance already is the target (no row then).
    await json<Account>('credits', 'unlimited', '--client', 'acme');
    expect(await json<Account>('credits', 'set', '--client', 'acme', '--credits', '205')).toMatchObject({ unlimited: false, balance: 205 });
    expect(ledgerRowCount()).toBe(rows + 1);
    // A client never given credits gets a zero balance from set 0: it is no longer unlimited.
    expect(await json<Account>('credits', 'set', '--client', 'globex', '--credits', '0'))
      .toEqual({ client: 'globex', unlimited: false, balance: 0, reserved: 0, available: 0 });
    expect(ledgerRowCount()).toBe(rows + 1);
  });

  it('refuses an unknown client with exit 1, changing nothing', async () => {
    const rows = ledgerRowCount();
    const runs = await Promise.all([
      smsgate('credits', 'show', '--client', 'nobody', ...cfg),
      smsgate('credits', 'add', '--client', 'nobody', '--credits', '10', ...cfg),
      smsgate('credits', 'set', '--client', 'nobody', '--credits', '10', ...cfg, '--json'),
      smsgate('credits', 'unlimited', '--client', 'nobody', ...cfg),
      smsgate('credits', 'history', '--client', 'nobody', ...cfg),
    ]);
    for (const run of runs) expect(run).toEqual({ code: 1, stdout: '', stderr: 'smsgate: no client named "nobody"\n' });
    expect(ledgerRowCount()).toBe(rows);
    expect(query<{ n: number }>('SELECT COUNT(*) AS n FROM client_credits')[0]?.n).toBe(2);
  });

  it('refuses bad numbers as usage errors with the usage line, changing nothing', async () => {
    const rows = ledgerRowCount();
    const before = await json<Account>('credits', 'show', '--client', 'acme');
    const cases: [string[], string, string][] = [
      [['add', '--credits', '1.5'], "--credits '1.5': must be a whole number (negative for a correction), at most 999999999999 in size", 'add'],
      [['add', '--credits', 'ten'], "--credits 'ten': must be a whole number (negative for a correction), at most 999999999999 in size", 'add'],
      [['add', '--credits', '0'], "--credits '0': must not be 0 (to give a client a zero balance: credits set --credits 0)", 'add'],
      [['add', '--credits', '1000000000000'], "--credits '1000000000000': must be a whole number (negative for a correction), at most 999999999999 in size", 'add'],
      [['add'], '--credits is required', 'add'],
      [['set', '--credits', '-5'], "--credits '-5': must be a whole number from 0, at most 999999999999 in size", 'set'],
      [['set', '--credits', '1e3'], "--credits '1e3': must be a whole number from 0, at most 999999999999 in size", 'set'],
      [['history', '--limit', '0'], "--limit '0': must be a whole number from 1 to 10000", 'history'],
      [['history', '--limit', 'all'], "--limit 'all': must be a whole number from 1 to 10000", 'history'],
    ];
    const runs = await Promise.all(cases.map(([[action, ...rest]]) => smsgate('credits', action as string, '--client', 'acme', ...rest, ...cfg)));
    runs.forEach((run, i) => {
      const [, message, action] = cases[i] as [string[], string, string];
      expect(run.code).toBe(2);
      expect(run.stdout).toBe('');
      expect(run.stderr).toMatch(new RegExp(`^smsgate: ${message.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\nusage: smsgate credits ${action} --client NAME`));
    });
    expect(ledgerRowCount()).toBe(rows);
    expect(await json<Account>('credits', 'show', '--client', 'acme')).toEqual(before);
  });

  it('keeps balance and reserved equal to the ledger sums by the kind rule', () => {
    for (const client of ['acme', 'globex']) {
      const { stored, ledger } = sumsAndLedger(client);
      expect(stored).toEqual(ledger);
    }
    expect(sumsAndLedger('acme').stored).toEqual({ balance: 205, reserved: 15 });
  });
});

describe('smsgate client set-rate', () => {
  const rate = (client: string) => query<{ parts_per_second: number }>(
    'SELECT parts_per_second FROM client_send_rates r JOIN clients c ON c.id = r.client_id WHERE c.name = ?', client)[0]?.parts_per_second;

  it('caps a client at N parts a second, changes it, and --unlimited removes the cap', async () => {
    expect(await json('client', 'set-rate', '--name', 'acme', '--parts-per-second', '50')).toEqual({ name: 'acme', partsPerSecond: 50 });
    expect(rate('acme')).toBe(50);
    const text = await smsgate('client', 'set-rate', '--name', 'acme', '--parts-per-second', '7', ...cfg);
    expect(text).toEqual({ code: 0, stdout: 'client acme: at most 7 parts a second\n', stderr: '' });
    expect(rate('acme')).toBe(7);
    expect(rate('globex')).toBeUndefined();
    expect(await json('client', 'set-rate', '--name', 'acme', '--unlimited')).toEqual({ name: 'acme', partsPerSecond: null });
    expect(rate('acme')).toBeUndefined();
  });

  it('refuses both or neither option and a rate that is not a positive whole number (exit 2), an unknown client (exit 1)', async () => {
    await json('client', 'set-rate', '--name', 'globex', '--parts-per-second', '20');
    const usage = 'usage: smsgate client set-rate --name NAME (--parts-per-second N | --unlimited) [--config FILE] [--json]\n';
    const [both, neither, zero, fraction, nobody] = await Promise.all([
      smsgate('client', 'set-rate', '--name', 'globex', '--parts-per-second', '5', '--unlimited', ...cfg),
      smsgate('client', 'set-rate', '--name', 'globex', ...cfg),
      smsgate('client', 'set-rate', '--name', 'globex', '--parts-per-second', '0', ...cfg),
      smsgate('client', 'set-rate', '--name', 'globex', '--parts-per-second', '2.5', ...cfg),
      smsgate('client', 'set-rate', '--name', 'nobody', '--parts-per-second', '5', ...cfg),
    ]);
    expect(both).toEqual({ code: 2, stdout: '', stderr: `smsgate: give exactly one of --parts-per-second N and --unlimited\n${usage}` });
    expect(neither).toEqual({ code: 2, stdout: '', stderr: `smsgate: give exactly one of --parts-per-second N and --unlimited\n${usage}` });
    expect(zero).toEqual({ code: 2, stdout: '', stderr: `smsgate: --parts-per-second '0': must be a whole number from 1 to 1000000\n${usage}` });
    expect(fraction).toEqual({ code: 2, stdout: '', stderr: `smsgate: --parts-per-second '2.5': must be a whole number from 1 to 1000000\n${usage}` });
    expect(nobody).toEqual({ code: 1, stdout: '', stderr: 'smsgate: no client named "nobody"\n' });
    expect(rate('globex')).toBe(20);
  });
});

/**
 * A client's message credits (docs/reference/commands.md "credits"):
 *   `smsgate credits show --client NAME`: balance, reserved and available (balance - reserved)
 *   `smsgate credits add --client NAME --credits N [--note TEXT]`: a top-up, or with N < 0 a correction
 *   `smsgate credits set --client NAME --credits N`: the balance becomes N (a correction of the difference)
 *   `smsgate credits unlimited --client NAME`: the client sends without a balance again
 *   `smsgate credits history --client NAME [--limit N]`: ledger rows, newest first (100 by default)
 * A client is unlimited until it is given a balance (add or set). Every change is a ledger row
 * written in one transaction with the sums, on SQLite or PostgreSQL, while `serve` runs: the
 * gateway sees it at its next reservation or charge.
 */
import type { CreditAccount } from '../../accounts/credits.js';
import { adminOutput, withPorts } from '../admin-session.js';
import { parseArgs, rejectExtraArguments, requireValue, unknownWordError, UsageError, withUsage, type ParsedArgs } from '../args.js';
import { formatTable, isoTime } from '../table.js';

const SHOW = 'smsgate credits show --client NAME [--config FILE] [--json]';
const ADD = 'smsgate credits add --client NAME --credits N [--note TEXT] [--config FILE] [--json]';
const SET = 'smsgate credits set --client NAME --credits N [--config FILE] [--json]';
const UNLIMITED = 'smsgate credits unlimited --client NAME [--config FILE] [--json]';
const HISTORY = 'smsgate credits history --client NAME [--limit N] [--config FILE] [--json]';
const USAGE = [SHOW, ADD, SET, UNLIMITED, HISTORY].join('\n       ');

/** `credits history` shows this many rows unless --limit says otherwise (1..10,000). */
export const DEFAULT_HISTORY_ROWS = 100;
const MAX_HISTORY_ROWS = 10_000;
/**
 * The largest credits one command moves or sets: a trillion keeps every sum far inside a JS
 * number's exact integers (2^53), whatever the ledger holds.
 */
const MAX_CREDITS = 999_999_999_999;
const MAX_NOTE_CHARS = 500;

export async function run(args: string[]): Promise<number> {
  return withUsage(async () => {
    const [action, ...rest] = args;
    switch (action) {
      case 'show':
        return show(parseArgs(rest, { values: ['config', 'client'], booleans: ['json'] }, SHOW));
      case 'add':
        return add(parseArgs(rest, { values: ['config', 'client', 'credits', 'note'], booleans: ['json'] }, ADD));
      case 'set':
        return set(parseArgs(rest, { values: ['config', 'client', 'credits'], booleans: ['json'] }, SET));
      case 'unlimited':
        return unlimited(parseArgs(rest, { values: ['config', 'client'], booleans: ['json'] }, UNLIMITED));
      case 'history':
        return history(parseArgs(rest, { values: ['config', 'client', 'limit'], booleans: ['json'] }, HISTORY));
      default:
        throw unknownWordError('action', action, USAGE, 'show, add, set, unlimited or history');
    }
  });
}

/** An account as `--json` prints it. */
function accountJson(account: CreditAccount): { client: string; unlimited: boolean; balance: number; reserved: number; available: number } {
  return { client: account.client, unlimited: account.unlimited, balance: account.balance, reserved: account.reserved, available: account.available };
}

function describe(account: CreditAccount): string {
  const sums = `balance ${account.balance}, reserved ${account.reserved}, available ${account.available}`;
  return account.unlimited ? `client ${account.client}: unlimited (${sums})` : `client ${account.client}: ${sums}`;
}

/** `--credits N`: a whole number, negative only where `allowNegative`, within MAX_CREDITS. */
function creditsValue(parsed: ParsedArgs, usage: string, allowNegative: boolean): number {
  const text = requireValue(parsed, 'credits', usage);
  const shape = allowNegative ? /^-?(0|[1-9][0-9]*)$/ : /^(0|[1-9][0-9]*)$/;
  const what = allowNegative ? 'a whole number (negative for a correction)' : 'a whole number from 0';
  if (!shape.test(text) || Math.abs(Number(text)) > MAX_CREDITS) throw new UsageError(`--credits '${text}': must be ${what}, at most ${MAX_CREDITS} in size`, usage);
  return Number(text);
}

async function show(parsed: ParsedArgs): Promise<number> {
  rejectExtraArguments(parsed.positionals, SHOW);
  const clientName = requireValue(parsed, 'client', SHOW);
  const out = adminOutput(parsed.booleans.has('json'));
  return withPorts(parsed.values.get('config'), { migrate: true }, async ({ ports }) => {
    const account = await ports.credits.account(clientName);
    out.result(describe(account), accountJson(account));
    return 0;
  });
}

async function add(parsed: ParsedArgs): Promise<number> {
  rejectExtraArguments(parsed.positionals, ADD);
  const clientName = requireValue(parsed, 'client', ADD);
  const credits = creditsValue(parsed, ADD, true);
  // A change of nothing writes no ledger row: refused rather than reported as done.
  if (credits === 0) throw new UsageError(`--credits '0': must not be 0 (to give a client a zero balance: credits set --credits 0)`, ADD);
  const note = parsed.values.get('note');
  if (note !== undefined && (note.length === 0 || note.length > MAX_NOTE_CHARS)) throw new UsageError(`--note must be 1 to ${MAX_NOTE_CHARS} characters`, ADD);
  const out = adminOutput(parsed.booleans.has('json'));
  return withPorts(parsed.values.get('config'), { migrate: true }, async ({ ports }) => {
    const account = await ports.credits.add(clientName, credits, note ?? null, Date.now());
    const kind = credits > 0 ? 'top-up' : 'correction';
    out.result(`${kind} of ${credits} credits: ${describe(account)}`, accountJson(account));
    return 0;
  });
}

async function set(parsed: ParsedArgs): Promise<number> {
  rejectExtraArguments(parsed.positionals, SET);
  const clientName = requireValue(parsed, 'client', SET);
  const credits = creditsValue(parsed, SET, false);
  const out = adminOutput(parsed.booleans.has('json'));
  return withPorts(parsed.values.get('config'), { migrate: true }, async ({ ports }) => {
    const account = await ports.credits.set(clientName, credits, Date.now());
    out.result(`balance set to ${credits}: ${describe(account)}`, accountJson(account));
    return 0;
  });
}

async function unlimited(parsed: ParsedArgs): Promise<number> {
  rejectExtraArguments(parsed.positionals, UNLIMITED);
  const clientName = requireValue(parsed, 'client', UNLIMITED);
  const out = adminOutput(parsed.booleans.has('json'));
  return withPorts(parsed.values.get('config'), { migrate: true }, async ({ ports }) => {
    const account = await ports.credits.unlimited(clientName, Date.now());
    out.result(describe(account), accountJson(account));
    return 0;
  });
}

async function history(parsed: ParsedArgs): Promise<number> {
  rejectExtraArguments(parsed.positionals, HISTORY);
  const clientName = requireValue(parsed, 'client', HISTORY);
  const limitText = parsed.values.get('limit') ?? String(DEFAULT_HISTORY_ROWS);
  if (!/^[1-9][0-9]*$/.test(limitText) || Number(limitText) > MAX_HISTORY_ROWS) {
    throw new UsageError(`--limit '${limitText}': must be a whole number from 1 to ${MAX_HISTORY_ROWS}`, HISTORY);
  }
  const out = adminOutput(parsed.booleans.has('json'));
  return withPorts(parsed.values.get('config'), { migrate: true }, async ({ ports }) => {
    const entries = (await ports.credits.history(clientName, Number(limitText)))
      .map((e) => ({ at: isoTime(e.atMs) as string, kind: e.kind, credits: e.credits, campaignId: e.campaignId, note: e.note }));
    out.result(formatTable(['at', 'kind', 'credits', 'campaign', 'note'], entries.map((e) => [e.at, e.kind, e.credits, e.campaignId, e.note]),
      `no credit movements for client ${clientName}`), entries);
    return 0;
  });
}

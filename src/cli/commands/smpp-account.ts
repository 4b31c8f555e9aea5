/**
 * The SMPP server's customer accounts (docs/reference/commands.md "smpp-account"):
 *   `smsgate smpp-account add --client NAME --system-id ID --password PW [--max-binds N] [--allow-ip CIDR]...`
 *   `smsgate smpp-account list`
 *   `smsgate smpp-account remove --system-id ID`
 *   `smsgate smpp-account set-password --system-id ID --password PW`
 * An account belongs to a client: its submits spend the client's credits at the client's rate.
 * The password is hashed here (scrypt, src/auth/password.ts) and only the hash is stored. Changes
 * apply at the next bind of a running `serve` (the bind check reads the account each time).
 */
import { hashPassword } from '../../auth/password.js';
import { formatIpBlock, parseIpBlock } from '../../smpp-server/accounts/allow-ip.js';
import { passwordProblem, systemIdProblem } from '../../smpp-server/accounts/credentials.js';
import type { SmppAccountListing } from '../../store/smpp-account-port.js';
import { adminOutput, withPorts } from '../admin-session.js';
import { parseArgs, rejectExtraArguments, requireValue, unknownWordError, UsageError, withUsage, type ParsedArgs } from '../args.js';
import { formatTable, isoTime } from '../table.js';

const ADD = 'smsgate smpp-account add --client NAME --system-id ID --password PW [--max-binds N] [--allow-ip CIDR]... [--config FILE] [--json]';
const LIST = 'smsgate smpp-account list [--config FILE] [--json]';
const REMOVE = 'smsgate smpp-account remove --system-id ID [--config FILE] [--json]';
const SET_PASSWORD = 'smsgate smpp-account set-password --system-id ID --password PW [--config FILE] [--json]';
const USAGE = [ADD, LIST, REMOVE, SET_PASSWORD].join('\n       ');

/** The most binds one account may be given: far above any ESME's need, far below a port's. */
export const MAX_BINDS_LIMIT = 1_000;

export async function run(args: string[]): Promise<number> {
  return withUsage(async () => {
    const [action, ...rest] = args;
    switch (action) {
      case 'add': {
        // --allow-ip may be given more than once: its values are taken out before the other options are parsed.
        const { allowIps, others } = takeRepeated(rest, 'allow-ip', ADD);
        return add(parseArgs(others, { values: ['config', 'client', 'system-id', 'password', 'max-binds'], booleans: ['json'] }, ADD), allowIps);
      }
      case 'list':
        return list(parseArgs(rest, { values: ['config'], booleans: ['json'] }, LIST));
      case 'remove':
        return remove(parseArgs(rest, { values: ['config', 'system-id'], booleans: ['json'] }, REMOVE));
      case 'set-password':
        return setPassword(parseArgs(rest, { values: ['config', 'system-id', 'password'], booleans: ['json'] }, SET_PASSWORD));
      default:
        throw unknownWordError('action', action, USAGE, 'add, list, remove or set-password');
    }
  });
}

/** Every `--NAME VALUE` / `--NAME=VALUE` of a repeatable option, and the arguments left. */
function takeRepeated(args: readonly string[], name: string, usage: string): { allowIps: string[]; others: string[] } {
  const values: string[] = [];
  const others: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] as string;
    if (arg === `--${name}`) {
      const value = args[++i];
      if (value === undefined) throw new UsageError(`--${name} needs a value`, usage);
      values.push(value);
    } else if (arg.startsWith(`--${name}=`)) {
      values.push(arg.slice(name.length + 3));
    } else {
      others.push(arg);
    }
  }
  return { allowIps: values, others };
}

/** An account as `--json` prints it (never the password or its hash). */
function accountJson(account: SmppAccountListing): {
  systemId: string; client: string; maxBinds: number | null; allowIps: string[]; createdAt: string | null; updatedAt: string | null;
} {
  return {
    systemId: account.systemId, client: account.clientName, maxBinds: account.maxBinds, allowIps: account.allowIps,
    createdAt: isoTime(account.createdAt), updatedAt: isoTime(account.updatedAt),
  };
}

function systemIdValue(parsed: ParsedArgs, usage: string): string {
  const systemId = requireValue(parsed, 'system-id', usage);
  const problem = systemIdProblem(systemId);
  if (problem !== null) throw new UsageError(`--system-id '${systemId}' ${problem}`, usage);
  return systemId;
}

/** The password is never echoed back, not even in a usage error. */
function passwordValue(parsed: ParsedArgs, usage: string): string {
  const password = requireValue(parsed, 'password', usage);
  const problem = passwordProblem(password);
  if (problem !== null) throw new UsageError(`--password ${problem}`, usage);
  return password;
}

function maxBindsValue(parsed: ParsedArgs): number | null {
  const text = parsed.values.get('max-binds');
  if (text === undefined) return null;
  if (!/^[1-9][0-9]*$/.test(text) || Number(text) > MAX_BINDS_LIMIT) {
    throw new UsageError(`--max-binds '${text}': must be a whole number from 1 to ${MAX_BINDS_LIMIT}`, ADD);
  }
  return Number(text);
}

/** Each --allow-ip as its canonical block (a bare address gets /32 or /128), duplicates once. */
function allowIpValues(texts: readonly string[]): string[] {
  const blocks = texts.map((text) => {
    const parsed = parseIpBlock(text);
    if (parsed.kind === 'invalid') throw new UsageError(`--allow-ip ${parsed.reason}`, ADD);
    return formatIpBlock(parsed.block);
  });
  return [...new Set(blocks)];
}

function describe(account: SmppAccountListing): string {
  const binds = account.maxBinds === null ? 'no bind limit' : `at most ${account.maxBinds} bind${account.maxBinds === 1 ? '' : 's'}`;
  const from = account.allowIps.length === 0 ? 'from any address' : `from ${account.allowIps.join(', ')}`;
  return `SMPP account ${account.systemId} of client ${account.clientName}: ${binds}, ${from}`;
}

async function add(parsed: ParsedArgs, allowIpTexts: readonly string[]): Promise<number> {
  rejectExtraArguments(parsed.positionals, ADD);
  const clientName = requireValue(parsed, 'client', ADD);
  const systemId = systemIdValue(parsed, ADD);
  const password = passwordValue(parsed, ADD);
  const maxBinds = maxBindsValue(parsed);
  const allowIps = allowIpValues(allowIpTexts);
  const out = adminOutput(parsed.booleans.has('json'));
  return withPorts(parsed.values.get('config'), { migrate: true }, async ({ ports }) => {
    const passwordHash = await hashPassword(password);
    const account = await ports.smppAccounts.add({ clientName, systemId, passwordHash, maxBinds, allowIps }, Date.now());
    out.result(`added ${describe(account)}`, accountJson(account));
    return 0;
  });
}

async function list(parsed: ParsedArgs): Promise<number> {
  rejectExtraArguments(parsed.positionals, LIST);
  const out = adminOutput(parsed.booleans.has('json'));
  return withPorts(parsed.values.get('config'), { migrate: true }, async ({ ports }) => {
    const accounts = (await ports.smppAccounts.list()).map(accountJson);
    out.result(formatTable(['system-id', 'client', 'max-binds', 'allow-ip', 'created', 'updated'],
      accounts.map((a) => [a.systemId, a.client, a.maxBinds ?? 'no limit', a.allowIps.length === 0 ? 'any' : a.allowIps.join(','), a.createdAt, a.updatedAt]),
      'no SMPP accounts'), accounts);
    return 0;
  });
}

async function remove(parsed: ParsedArgs): Promise<number> {
  rejectExtraArguments(parsed.positionals, REMOVE);
  const systemId = requireValue(parsed, 'system-id', REMOVE);
  const out = adminOutput(parsed.booleans.has('json'));
  return withPorts(parsed.values.get('config'), { migrate: true }, async ({ ports }) => {
    await ports.smppAccounts.remove(systemId);
    out.result(`removed SMPP account ${systemId}`, { systemId, removed: true });
    return 0;
  });
}

async function setPassword(parsed: ParsedArgs): Promise<number> {
  rejectExtraArguments(parsed.positionals, SET_PASSWORD);
  const systemId = requireValue(parsed, 'system-id', SET_PASSWORD);
  const password = passwordValue(parsed, SET_PASSWORD);
  const out = adminOutput(parsed.booleans.has('json'));
  return withPorts(parsed.values.get('config'), { migrate: true }, async ({ ports }) => {
    const nowMs = Date.now();
    await ports.smppAccounts.setPassword(systemId, await hashPassword(password), nowMs);
    out.result(`new password set for SMPP account ${systemId}; it applies from its next bind`, { systemId, updatedAt: isoTime(nowMs) });
    return 0;
  });
}

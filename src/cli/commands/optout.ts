/**
 * A client's suppression list: numbers its later campaigns skip during
 * processing. Filled by opt-out keywords (`smsgate client set-optout`) and by hand:
 *   `smsgate optout list --client NAME`
 *   `smsgate optout add --client NAME --msisdn N`
 *   `smsgate optout remove --client NAME --msisdn N`
 * Numbers are normalised like campaign msisdns, with the config's numbering.country (with the
 * default IE, 0871234567 is 353871234567), so the stored form is the one the campaign
 * processor compares.
 */
import { InboundAdmin } from '../../inbound/inbound-admin.js';
import { normalizeMsisdn, numberingPlanFor } from '../../sms/index.js';
import { adminOutput, withPorts } from '../admin-session.js';
import { parseArgs, rejectExtraArguments, requireValue, unknownWordError, UsageError, withUsage, type ParsedArgs } from '../args.js';

const LIST = 'smsgate optout list --client NAME [--config FILE] [--json]';
const ADD = 'smsgate optout add --client NAME --msisdn N [--config FILE] [--json]';
const REMOVE = 'smsgate optout remove --client NAME --msisdn N [--config FILE] [--json]';
const USAGE = [LIST, ADD, REMOVE].join('\n       ');

export async function run(args: string[]): Promise<number> {
  return withUsage(async () => {
    const [action, ...rest] = args;
    if (action === 'list') return list(parseArgs(rest, { values: ['config', 'client'], booleans: ['json'] }, LIST));
    if (action === 'add' || action === 'remove') {
      const usage = action === 'add' ? ADD : REMOVE;
      return change(action, parseArgs(rest, { values: ['config', 'client', 'msisdn'], booleans: ['json'] }, usage), usage);
    }
    throw unknownWordError('action', action, USAGE, 'list, add or remove');
  });
}

async function list(parsed: ParsedArgs): Promise<number> {
  rejectExtraArguments(parsed.positionals, LIST);
  const clientName = requireValue(parsed, 'client', LIST);
  const out = adminOutput(parsed.booleans.has('json'));
  return withPorts(parsed.values.get('config'), { migrate: true }, async ({ ports }) => {
    const admin = new InboundAdmin(ports.inbound);
    const entries = (await admin.listOptouts(clientName)).map((e) => ({ msisdn: e.msisdn, source: e.source, createdAt: new Date(e.createdAtMs).toISOString() }));
    const keywords = await admin.optoutKeywords(clientName);
    const header = keywords.length === 0 ? 'opt-out keywords: off' : `opt-out keywords: ${keywords.join(', ')}`;
    out.result([header, ...entries.map((e) => `${e.msisdn}\t${e.source}\t${e.createdAt}`)].join('\n'), { client: clientName, keywords, numbers: entries });
    return 0;
  });
}

async function change(action: 'add' | 'remove', parsed: ParsedArgs, usage: string): Promise<number> {
  rejectExtraArguments(parsed.positionals, usage);
  const clientName = requireValue(parsed, 'client', usage);
  const raw = requireValue(parsed, 'msisdn', usage);
  // The shape checks do not depend on the numbering plan: a malformed number is a usage error before the store opens.
  const shape = normalizeMsisdn(raw);
  if (!shape.ok) throw new UsageError(`--msisdn '${raw}': ${shape.reason}`, usage);
  const out = adminOutput(parsed.booleans.has('json'));
  return withPorts(parsed.values.get('config'), { migrate: true }, async ({ config, ports }) => {
    const normalized = normalizeMsisdn(raw, numberingPlanFor(config.numbering.country));
    if (!normalized.ok) throw new UsageError(`--msisdn '${raw}': ${normalized.reason}`, usage);
    const msisdn = normalized.msisdn;
    const admin = new InboundAdmin(ports.inbound);
    if (action === 'add') {
      const added = await admin.addOptout(clientName, msisdn);
      out.result(added ? `${msisdn} added to the suppression list of client ${clientName}` : `${msisdn} was already on the suppression list of client ${clientName}`, { client: clientName, msisdn, added });
    } else {
      await admin.removeOptout(clientName, msisdn);
      out.result(`${msisdn} removed from the suppression list of client ${clientName}`, { client: clientName, msisdn, removed: true });
    }
    return 0;
  });
}

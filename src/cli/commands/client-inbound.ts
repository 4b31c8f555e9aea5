/**
 * The inbound actions of `smsgate client`:
 *   `client set-inbound-webhook --name NAME (--url URL | --clear)`: where the client's inbound
 *     messages are POSTed, one per whole message, signed with the client's webhook secret (the one
 *     `client set-webhook --secret` sets); --clear stops them (pending events become dead letters
 *     NO_WEBHOOK_URL, as for receipts).
 *   `client set-optout --name NAME (--keywords K1,K2 | --clear)`: the opt-out keywords; off unless set.
 */
import { checkWebhookUrl } from '../../auth/accounts.js';
import { isGatewayError } from '../../common/errors.js';
import { InboundAdmin } from '../../inbound/inbound-admin.js';
import { parseKeywordList } from '../../inbound/optout-keywords.js';
import { adminOutput, withPorts } from '../admin-session.js';
import { parseArgs, rejectExtraArguments, requireValue, UsageError, withUsage, type ParsedArgs } from '../args.js';

export const SET_INBOUND_WEBHOOK_USAGE = 'smsgate client set-inbound-webhook --name NAME (--url URL | --clear) [--config FILE] [--json]';
export const SET_OPTOUT_USAGE = 'smsgate client set-optout --name NAME (--keywords STOP,STOPALL | --clear) [--config FILE] [--json]';
export const CLIENT_INBOUND_ACTIONS = ['set-inbound-webhook', 'set-optout'] as const;

export function isClientInboundAction(action: string | undefined): boolean {
  return (CLIENT_INBOUND_ACTIONS as readonly string[]).includes(action ?? '');
}

export async function runClientInbound(args: string[]): Promise<number> {
  return withUsage(async () => {
    const [action, ...rest] = args;
    if (action === 'set-inbound-webhook') return setInboundWebhook(parseArgs(rest, { values: ['config', 'name', 'url'], booleans: ['json', 'clear'] }, SET_INBOUND_WEBHOOK_USAGE));
    return setOptout(parseArgs(rest, { values: ['config', 'name', 'keywords'], booleans: ['json', 'clear'] }, SET_OPTOUT_USAGE));
  });
}

/** Exactly one of --<valueFlag> and --clear. */
function valueOrClear(parsed: ParsedArgs, valueFlag: string, usage: string): string | null {
  const value = parsed.values.get(valueFlag);
  const clear = parsed.booleans.has('clear');
  if (value !== undefined && clear) throw new UsageError(`--${valueFlag} and --clear exclude each other`, usage);
  if (value === undefined && !clear) throw new UsageError(`--${valueFlag} or --clear is required`, usage);
  return value ?? null;
}

async function setInboundWebhook(parsed: ParsedArgs): Promise<number> {
  rejectExtraArguments(parsed.positionals, SET_INBOUND_WEBHOOK_USAGE);
  const name = requireValue(parsed, 'name', SET_INBOUND_WEBHOOK_USAGE);
  const given = valueOrClear(parsed, 'url', SET_INBOUND_WEBHOOK_USAGE);
  let url: string | null = null;
  if (given !== null) {
    try {
      url = checkWebhookUrl(given);
    } catch (err) {
      if (isGatewayError(err)) throw new UsageError(err.message, SET_INBOUND_WEBHOOK_USAGE);
      throw err;
    }
  }
  const out = adminOutput(parsed.booleans.has('json'));
  return withPorts(parsed.values.get('config'), { migrate: true }, async ({ ports }) => {
    const result = await new InboundAdmin(ports.inbound).setInboundWebhook(name, url);
    out.result(url === null ? `client ${result.client}: no inbound webhook` : `client ${result.client}: inbound messages go to ${url}`, result);
    return 0;
  });
}

async function setOptout(parsed: ParsedArgs): Promise<number> {
  rejectExtraArguments(parsed.positionals, SET_OPTOUT_USAGE);
  const name = requireValue(parsed, 'name', SET_OPTOUT_USAGE);
  const given = valueOrClear(parsed, 'keywords', SET_OPTOUT_USAGE);
  let keywords: string[] | null = null;
  if (given !== null) {
    const list = parseKeywordList(given);
    if (!list.ok) throw new UsageError(list.reason, SET_OPTOUT_USAGE);
    keywords = list.keywords;
  }
  const out = adminOutput(parsed.booleans.has('json'));
  return withPorts(parsed.values.get('config'), { migrate: true }, async ({ ports }) => {
    const result = await new InboundAdmin(ports.inbound).setOptoutKeywords(name, keywords);
    out.result(keywords === null ? `client ${result.client}: opt-out keywords off` : `client ${result.client}: opt-out keywords ${keywords.join(', ')}`, result);
    return 0;
  });
}

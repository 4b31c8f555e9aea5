/**
 * `smsgate inbound route add --client NAME --to NUMBER` gives the messages sent to a number (a long
 * number, a short code, or a modem's SIM number: its `devices[].number`) to a client;
 * `smsgate inbound route list` and `smsgate inbound route remove --to NUMBER` show and remove routes.
 * `smsgate inbound list [--unrouted] [--limit N]` shows the newest stored messages, or only those no
 * client owns (kept, never sent to any client). Numbers are normalised like msisdns, with the config's
 * numbering.country, as the running InboundService normalises a message's To.
 */
import { InboundAdmin } from '../../inbound/inbound-admin.js';
import { parseRouteNumber } from '../../inbound/address.js';
import { numberingPlanFor, type NumberingPlan } from '../../sms/index.js';
import { adminOutput, withPorts } from '../admin-session.js';
import { parseArgs, rejectExtraArguments, requireValue, unknownWordError, UsageError, withUsage, type ParsedArgs } from '../args.js';

const ROUTE_ADD = 'smsgate inbound route add --client NAME --to NUMBER [--config FILE] [--json]';
const ROUTE_LIST = 'smsgate inbound route list [--config FILE] [--json]';
const ROUTE_REMOVE = 'smsgate inbound route remove --to NUMBER [--config FILE] [--json]';
const LIST = 'smsgate inbound list [--unrouted] [--limit N] [--config FILE] [--json]';
const USAGE = [ROUTE_ADD, ROUTE_LIST, ROUTE_REMOVE, LIST].join('\n       ');
/** `inbound list` shows this many messages unless --limit says otherwise (1..10,000). */
const DEFAULT_LIST_ROWS = 50;
const MAX_LIST_ROWS = 10_000;

export async function run(args: string[]): Promise<number> {
  return withUsage(async () => {
    const [word, ...rest] = args;
    if (word === 'list') return list(parseArgs(rest, { values: ['config', 'limit'], booleans: ['json', 'unrouted'] }, LIST));
    if (word !== 'route') throw unknownWordError('subcommand', word, USAGE, 'route or list');
    const [action, ...flags] = rest;
    if (action === 'add') return routeAdd(parseArgs(flags, { values: ['config', 'client', 'to'], booleans: ['json'] }, ROUTE_ADD));
    if (action === 'list') return routeList(parseArgs(flags, { values: ['config'], booleans: ['json'] }, ROUTE_LIST));
    if (action === 'remove') return routeRemove(parseArgs(flags, { values: ['config', 'to'], booleans: ['json'] }, ROUTE_REMOVE));
    throw unknownWordError('action', action, USAGE, 'add, list or remove');
  });
}

/** The shape check needs no plan (default IE), so a malformed --to is a usage error before the store opens; the config's plan then gives the stored form. */
function routeNumber(parsed: ParsedArgs, usage: string, plan?: NumberingPlan): string {
  const result = parseRouteNumber(requireValue(parsed, 'to', usage), plan);
  if (!result.ok) throw new UsageError(result.reason, usage);
  return result.address;
}

async function routeAdd(parsed: ParsedArgs): Promise<number> {
  rejectExtraArguments(parsed.positionals, ROUTE_ADD);
  const clientName = requireValue(parsed, 'client', ROUTE_ADD);
  routeNumber(parsed, ROUTE_ADD);
  const out = adminOutput(parsed.booleans.has('json'));
  return withPorts(parsed.values.get('config'), { migrate: true }, async ({ config, ports }) => {
    const address = routeNumber(parsed, ROUTE_ADD, numberingPlanFor(config.numbering.country));
    const route = await new InboundAdmin(ports.inbound).addRoute(clientName, address);
    out.result(`messages to ${route.to} go to client ${route.client}`, route);
    return 0;
  });
}

async function routeList(parsed: ParsedArgs): Promise<number> {
  rejectExtraArguments(parsed.positionals, ROUTE_LIST);
  const out = adminOutput(parsed.booleans.has('json'));
  return withPorts(parsed.values.get('config'), { migrate: true }, async ({ ports }) => {
    const routes = await new InboundAdmin(ports.inbound).listRoutes();
    out.result(routes.length === 0 ? 'no inbound routes' : routes.map((r) => `${r.to}\t${r.client}`).join('\n'), routes);
    return 0;
  });
}

async function routeRemove(parsed: ParsedArgs): Promise<number> {
  rejectExtraArguments(parsed.positionals, ROUTE_REMOVE);
  routeNumber(parsed, ROUTE_REMOVE);
  const out = adminOutput(parsed.booleans.has('json'));
  return withPorts(parsed.values.get('config'), { migrate: true }, async ({ config, ports }) => {
    const address = routeNumber(parsed, ROUTE_REMOVE, numberingPlanFor(config.numbering.country));
    const route = await new InboundAdmin(ports.inbound).removeRoute(address);
    out.result(`removed the route of ${route.to} (client ${route.client})`, route);
    return 0;
  });
}

async function list(parsed: ParsedArgs): Promise<number> {
  rejectExtraArguments(parsed.positionals, LIST);
  const limitText = parsed.values.get('limit') ?? String(DEFAULT_LIST_ROWS);
  if (!/^[1-9][0-9]*$/.test(limitText) || Number(limitText) > MAX_LIST_ROWS) throw new UsageError(`--limit must be a whole number from 1 to ${MAX_LIST_ROWS}`, LIST);
  const out = adminOutput(parsed.booleans.has('json'));
  return withPorts(parsed.values.get('config'), { migrate: true }, async ({ ports }) => {
    const messages = await new InboundAdmin(ports.inbound).listMessages({ unrouted: parsed.booleans.has('unrouted'), maxRows: Number(limitText) });
    const text = messages.length === 0
      ? 'no inbound messages'
      : messages.map((m) => `${m.receivedAt}\t${m.id}\t${m.from} -> ${m.to}\t${m.client ?? '(unrouted)'}${m.incomplete ? '\t(incomplete)' : ''}\t${JSON.stringify(m.text)}`).join('\n');
    out.result(text, messages);
    return 0;
  });
}

/**
 * `smsgate campaign list [--client NAME] [--state S] [--limit N]`: campaigns newest first (50 unless
 * --limit says otherwise) with their recipient counts; `smsgate campaign show ID`: one campaign's
 * counts (recipients by summary status, parts by send state, webhooks by state), its outcome
 * breakdown (the status page's: delivered, undelivered by receipt status, rejected by submit code,
 * pending) and timings (created, ready, dispatched, first and last submit, last final outcome).
 */
import { formatOutcomes, outcomeBreakdown, type OutcomeBreakdown } from '../../admin/campaign-outcomes.js';
import { GatewayError } from '../../common/errors.js';
import type { CampaignDetail } from '../../store/sqlite/admin-queries.js';
import type { CampaignState } from '../../store/entities.js';
import { adminOutput, withPorts } from '../admin-session.js';
import { parseArgs, rejectExtraArguments, unknownWordError, UsageError, withUsage, type ParsedArgs } from '../args.js';
import { formatTable, isoTime } from '../table.js';

const USAGE = 'smsgate campaign list [--client NAME] [--state S] [--limit N] [--config FILE] [--json]\n'
  + '       smsgate campaign show ID [--config FILE] [--json]';

/** The stored states (migrations/1763740000000: campaigns.state CHECK). */
const CAMPAIGN_STATES: readonly CampaignState[] = ['queued', 'draft', 'processing', 'ready', 'failed'];
const DEFAULT_LIMIT = 50;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export async function run(args: string[]): Promise<number> {
  return withUsage(async () => {
    const parsed = parseArgs(args, { values: ['config', 'client', 'state', 'limit'], booleans: ['json'] }, USAGE);
    const [action, ...rest] = parsed.positionals;
    if (action === 'list') return list(parsed, rest);
    if (action === 'show') return show(parsed, rest);
    throw unknownWordError('action', action, USAGE, 'list or show');
  });
}

function only(parsed: ParsedArgs, action: string, allowed: readonly string[]): void {
  for (const flag of [...parsed.values.keys(), ...parsed.booleans]) {
    if (!['config', 'json', ...allowed].includes(flag)) throw new UsageError(`--${flag} does not apply to campaign ${action}`, USAGE);
  }
}

async function list(parsed: ParsedArgs, extra: string[]): Promise<number> {
  rejectExtraArguments(extra, USAGE);
  only(parsed, 'list', ['client', 'state', 'limit']);
  const state = parsed.values.get('state');
  if (state !== undefined && !(CAMPAIGN_STATES as readonly string[]).includes(state)) throw new UsageError(`--state must be one of ${CAMPAIGN_STATES.join(', ')}`, USAGE);
  const limitText = parsed.values.get('limit');
  if (limitText !== undefined && !/^[1-9][0-9]{0,6}$/.test(limitText)) throw new UsageError('--limit must be a whole number from 1', USAGE);
  const clientName = parsed.values.get('client');
  const out = adminOutput(parsed.booleans.has('json'));
  return withPorts(parsed.values.get('config'), { migrate: true }, async ({ ports }) => {
    let clientId: number | undefined;
    if (clientName !== undefined) {
      clientId = (await ports.auth.clientByName(clientName))?.id;
      if (clientId === undefined) throw new GatewayError('CLIENT_NOT_FOUND', `no client named "${clientName}"`);
    }
    const rows = (await ports.admin.listCampaigns({
      ...(clientId === undefined ? {} : { clientId }), ...(state === undefined ? {} : { state: state as CampaignState }),
      limit: limitText === undefined ? DEFAULT_LIMIT : Number(limitText),
    })).map((c) => ({
      id: c.id, client: c.client, state: c.state, name: c.name, from: c.sender, createdAt: isoTime(c.createdAt), sendAt: isoTime(c.sendAt),
      totalSent: c.totalSent, delivered: c.counts.delivered, undelivered: c.counts.undelivered, pending: c.counts.pending,
    }));
    out.result(formatTable(['id', 'client', 'state', 'created', 'total', 'delivered', 'undelivered', 'pending', 'name'],
      rows.map((c) => [c.id, c.client, c.state, c.createdAt, c.totalSent, c.delivered, c.undelivered, c.pending, c.name]), 'no campaigns'), rows);
    return 0;
  });
}

function showJson(c: CampaignDetail, outcomes: OutcomeBreakdown) {
  return {
    id: c.id, client: c.client, user: c.username, state: c.state, name: c.name, from: c.sender, encoding: c.encoding,
    partsPerMessage: c.partsPerMessage, totalSent: c.totalSent, skipped: c.skipped, failureReason: c.failureReason,
    recipients: c.recipients, outcomes, parts: c.parts, webhooks: c.webhooks,
    times: {
      createdAt: isoTime(c.createdAt), sendAtLocal: c.sendAtLocal, sendAt: isoTime(c.sendAt), readyAt: isoTime(c.readyAt),
      dispatchedAt: isoTime(c.dispatchedAt), firstSubmittedAt: isoTime(c.firstSubmittedAt), lastSubmittedAt: isoTime(c.lastSubmittedAt),
      lastFinalAt: isoTime(c.lastFinalAt),
    },
  };
}

function showText(c: ReturnType<typeof showJson>): string {
  const counts = (o: Record<string, number>) => Object.entries(o).map(([k, v]) => `${k} ${v}`).join(', ');
  const lines = [
    `campaign ${c.id} (${c.state})`,
    `client ${c.client}${c.user === null ? '' : `, user ${c.user}`}; from ${c.from}; name ${JSON.stringify(c.name)}`,
    `encoding ${c.encoding ?? '-'}, ${c.partsPerMessage ?? '-'} part(s) per message; total sent ${c.totalSent ?? '-'}, skipped ${c.skipped ?? '-'}`,
    ...(c.failureReason === null ? [] : [`failed: ${c.failureReason}`]),
    `recipients: ${counts(c.recipients)}`,
    `outcome: ${formatOutcomes(c.outcomes)}`,
    `parts: ${counts(c.parts)}`,
    `webhooks: ${counts(c.webhooks)}`,
    ...Object.entries(c.times).map(([k, v]) => `${k.padEnd(17)} ${v ?? '-'}`),
  ];
  return lines.join('\n');
}

async function show(parsed: ParsedArgs, rest: string[]): Promise<number> {
  only(parsed, 'show', []);
  const [id, ...extra] = rest;
  if (id === undefined) throw new UsageError('campaign show needs the campaign ID', USAGE);
  rejectExtraArguments(extra, USAGE);
  if (!UUID.test(id)) throw new UsageError(`'${id}' is not a campaign id (a UUID)`, USAGE);
  const out = adminOutput(parsed.booleans.has('json'));
  return withPorts(parsed.values.get('config'), { migrate: true }, async ({ ports }) => {
    const detail = await ports.admin.campaignDetail(id.toLowerCase());
    if (detail === undefined) throw new GatewayError('CAMPAIGN_NOT_FOUND', `no campaign with id ${id}`);
    const undelivered = detail.recipients.undelivered === 0 ? [] : await ports.status.undeliveredGroups(detail.id);
    const json = showJson(detail, outcomeBreakdown(detail.recipients, undelivered));
    out.result(showText(json), json);
    return 0;
  });
}

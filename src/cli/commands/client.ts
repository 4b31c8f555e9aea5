/**
 * `smsgate client create --name NAME [--webhook-url URL] [--webhook-secret SECRET]`
 * `smsgate client set-webhook --name NAME --url URL [--secret SECRET | --clear-secret]`
 * set-webhook without --secret keeps the stored secret; --clear-secret removes it (webhooks are
 * then sent unsigned, SPEC "Authentication" §7).
 * `smsgate client list` shows every client; `smsgate client deactivate|activate --name NAME`: the
 * users of a deactivated client get 403 on the API and cannot log in (README "Tokens").
 * `smsgate client set-rate --name NAME (--parts-per-second N | --unlimited)`: the most parts a
 * second the client's messages leave at, over all transports and cluster nodes; --unlimited
 * removes the cap. The running gateway reads it at its next claim.
 */
import type { CreatedClient } from '../../auth/index.js';
import { adminOutput, withAdminSession, withPorts } from '../admin-session.js';
import { parseArgs, rejectExtraArguments, requireValue, unknownWordError, UsageError, withUsage } from '../args.js';
import { formatTable, isoTime } from '../table.js';
import { isClientInboundAction, runClientInbound } from './client-inbound.js';

const USAGE = 'smsgate client create --name NAME [--webhook-url URL] [--webhook-secret SECRET] [--config FILE] [--json]\n'
  + '       smsgate client set-webhook --name NAME --url URL [--secret SECRET | --clear-secret] [--config FILE] [--json]\n'
  + '       smsgate client list [--config FILE] [--json]\n'
  + '       smsgate client deactivate|activate --name NAME [--config FILE] [--json]\n'
  + '       smsgate client set-rate --name NAME (--parts-per-second N | --unlimited) [--config FILE] [--json]';
const SET_RATE = 'smsgate client set-rate --name NAME (--parts-per-second N | --unlimited) [--config FILE] [--json]';

/** The largest --parts-per-second: far above what any transport sends, so only a typo is refused. */
const MAX_PARTS_PER_SECOND = 1_000_000;

function describe(client: CreatedClient): string {
  const webhook = client.webhookUrl === null ? 'no webhook' : `webhook ${client.webhookUrl} (${client.hasWebhookSecret ? 'signed' : 'unsigned'})`;
  return `client ${client.name} (id ${client.id}): ${webhook}`;
}

export async function run(args: string[]): Promise<number> {
  // set-inbound-webhook and set-optout live in client-inbound.ts.
  if (isClientInboundAction(args[0])) return runClientInbound(args);
  return withUsage(async () => {
    const parsed = parseArgs(args, { values: ['config', 'name', 'webhook-url', 'webhook-secret', 'url', 'secret', 'parts-per-second'], booleans: ['json', 'clear-secret', 'unlimited'] }, USAGE);
    const [action, ...extra] = parsed.positionals;
    rejectExtraArguments(extra, USAGE);
    const out = adminOutput(parsed.booleans.has('json'));
    const only = (allowed: string[], withName = true): void => {
      for (const flag of [...parsed.values.keys(), ...parsed.booleans]) {
        if (!['config', 'json', ...(withName ? ['name'] : []), ...allowed].includes(flag)) throw new UsageError(`--${flag} does not apply to client ${action ?? ''}`, USAGE);
      }
    };
    if (action === 'list') {
      only([], false);
      return withAdminSession(parsed.values.get('config'), async ({ ports }) => {
        const rows = (await ports.admin.listClients()).map((c) => ({
          id: c.id, name: c.name, active: c.active === 1, webhookUrl: c.webhookUrl, webhookSigned: c.signed === 1,
          users: c.users, senders: c.senders, createdAt: isoTime(c.createdAt),
        }));
        out.result(formatTable(['id', 'name', 'active', 'webhook', 'signed', 'users', 'senders', 'created'],
          rows.map((c) => [c.id, c.name, c.active ? 'yes' : 'no', c.webhookUrl, c.webhookUrl === null ? null : c.webhookSigned ? 'yes' : 'no', c.users, c.senders, c.createdAt]),
          'no clients'), rows);
        return 0;
      });
    }
    const name = requireValue(parsed, 'name', USAGE);
    if (action === 'deactivate' || action === 'activate') {
      only([]);
      const active = action === 'activate';
      return withAdminSession(parsed.values.get('config'), async ({ auth }) => {
        await auth.accounts.setClientActive(name, active);
        out.result(`client ${name} ${active ? 'activated' : 'deactivated'}`, { name, active });
        return 0;
      });
    }
    if (action === 'create') {
      only(['webhook-url', 'webhook-secret']);
      const webhookUrl = parsed.values.get('webhook-url');
      const webhookSecret = parsed.values.get('webhook-secret');
      if (webhookSecret !== undefined && webhookUrl === undefined) throw new UsageError('--webhook-secret needs --webhook-url', USAGE);
      return withAdminSession(parsed.values.get('config'), async ({ auth }) => {
        const client = await auth.createClient({ name, ...(webhookUrl === undefined ? {} : { webhookUrl }), ...(webhookSecret === undefined ? {} : { webhookSecret }) });
        out.result(`created ${describe(client)}`, client);
        return 0;
      });
    }
    if (action === 'set-webhook') {
      only(['url', 'secret', 'clear-secret']);
      const url = requireValue(parsed, 'url', USAGE);
      const secret = parsed.values.get('secret');
      const clear = parsed.booleans.has('clear-secret');
      if (clear && secret !== undefined) throw new UsageError('--secret and --clear-secret exclude each other', USAGE);
      return withAdminSession(parsed.values.get('config'), async ({ auth }) => {
        const client = await auth.setWebhook(name, { url, ...(clear ? { secret: null } : secret === undefined ? {} : { secret }) });
        out.result(`updated ${describe(client)}`, client);
        return 0;
      });
    }
    if (action === 'set-rate') {
      only(['parts-per-second', 'unlimited']);
      const rateText = parsed.values.get('parts-per-second');
      const unlimited = parsed.booleans.has('unlimited');
      if ((rateText === undefined) === !unlimited) throw new UsageError('give exactly one of --parts-per-second N and --unlimited', SET_RATE);
      if (rateText !== undefined && (!/^[1-9][0-9]*$/.test(rateText) || Number(rateText) > MAX_PARTS_PER_SECOND)) {
        throw new UsageError(`--parts-per-second '${rateText}': must be a whole number from 1 to ${MAX_PARTS_PER_SECOND}`, SET_RATE);
      }
      const partsPerSecond = rateText === undefined ? null : Number(rateText);
      return withPorts(parsed.values.get('config'), { migrate: true }, async ({ ports }) => {
        await ports.credits.setRate(name, partsPerSecond, Date.now());
        out.result(partsPerSecond === null ? `client ${name}: send rate unlimited` : `client ${name}: at most ${partsPerSecond} parts a second`, { name, partsPerSecond });
        return 0;
      });
    }
    throw unknownWordError('action', action, USAGE, 'create, set-webhook, list, deactivate, activate or set-rate');
  });
}

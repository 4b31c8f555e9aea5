/**
 * `smsgate sender add --client NAME --sender S --type 0|1|2`: puts a sender id on an account's
 * permitted list (SPEC "Sender entry": 0 registered with the national regulator, 1 international
 * not approved by it, 2 numeric). Types 0 and 2 permit sending to Irish recipients; 1 does not.
 * `smsgate sender list [--client NAME]` shows the lists; `smsgate sender remove --client NAME
 * --sender S` takes one off (campaigns already accepted keep the check they had at processing).
 */
import { GatewayError } from '../../common/errors.js';
import type { StorePorts } from '../../store/store-ports.js';
import { adminOutput, withAdminSession } from '../admin-session.js';
import { parseArgs, rejectExtraArguments, requireValue, unknownWordError, UsageError, withUsage, type ParsedArgs } from '../args.js';
import { formatTable, isoTime } from '../table.js';

const USAGE = 'smsgate sender add --client NAME --sender S --type 0|1|2 [--config FILE] [--json]\n'
  + '       smsgate sender list [--client NAME] [--config FILE] [--json]\n'
  + '       smsgate sender remove --client NAME --sender S [--config FILE] [--json]';

function only(parsed: ParsedArgs, action: string, allowed: readonly string[]): void {
  for (const flag of [...parsed.values.keys(), ...parsed.booleans]) {
    if (!['config', 'json', ...allowed].includes(flag)) throw new UsageError(`--${flag} does not apply to sender ${action}`, USAGE);
  }
}

async function clientId(ports: StorePorts, name: string): Promise<number> {
  const client = await ports.auth.clientByName(name);
  if (client === undefined) throw new GatewayError('CLIENT_NOT_FOUND', `no client named "${name}"`);
  return client.id;
}

export async function run(args: string[]): Promise<number> {
  return withUsage(async () => {
    const parsed = parseArgs(args, { values: ['config', 'client', 'sender', 'type'], booleans: ['json'] }, USAGE);
    const [action, ...extra] = parsed.positionals;
    rejectExtraArguments(extra, USAGE);
    const out = adminOutput(parsed.booleans.has('json'));
    const configPath = parsed.values.get('config');
    if (action === 'add') {
      only(parsed, action, ['client', 'sender', 'type']);
      const clientName = requireValue(parsed, 'client', USAGE);
      const sender = requireValue(parsed, 'sender', USAGE);
      const typeText = requireValue(parsed, 'type', USAGE);
      if (!/^[012]$/.test(typeText)) throw new UsageError('--type must be 0, 1 or 2', USAGE);
      return withAdminSession(configPath, async ({ auth }) => {
        const added = await auth.addSender({ clientName, sender, type: Number(typeText) });
        out.result(`added sender ${added.name} (type ${added.type}) to client ${added.clientName}`, added);
        return 0;
      });
    }
    if (action === 'list') {
      only(parsed, action, ['client']);
      const clientName = parsed.values.get('client');
      return withAdminSession(configPath, async ({ ports }) => {
        const rows = (await ports.admin.listSenders(clientName === undefined ? undefined : await clientId(ports, clientName)))
          .map((s) => ({ id: s.id, client: s.client, name: s.name, type: s.type, createdAt: isoTime(s.createdAt) }));
        out.result(formatTable(['id', 'client', 'sender', 'type', 'added'], rows.map((s) => [s.id, s.client, s.name, s.type, s.createdAt]), 'no senders'), rows);
        return 0;
      });
    }
    if (action === 'remove') {
      only(parsed, action, ['client', 'sender']);
      const clientName = requireValue(parsed, 'client', USAGE);
      const sender = requireValue(parsed, 'sender', USAGE);
      return withAdminSession(configPath, async ({ ports }) => {
        if (!(await ports.admin.removeSender(await clientId(ports, clientName), sender))) {
          throw new GatewayError('SENDER_NOT_FOUND', `sender "${sender}" is not on client "${clientName}"`);
        }
        out.result(`removed sender ${sender} from client ${clientName}`, { client: clientName, sender, removed: true });
        return 0;
      });
    }
    throw unknownWordError('action', action, USAGE, 'add, list or remove');
  });
}

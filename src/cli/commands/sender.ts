/**
 * `smsgate sender add --client NAME --sender S --type 0|1|2`: puts a sender id on an account's
 * permitted list (SPEC "Sender entry": 0 registered with the national regulator, 1 international
 * not approved by it, 2 numeric). Types 0 and 2 permit sending to Irish recipients; 1 does not.
 */
import { adminOutput, withAdminSession } from '../admin-session.js';
import { parseArgs, rejectExtraArguments, requireValue, unknownWordError, UsageError, withUsage } from '../args.js';

const USAGE = 'smsgate sender add --client NAME --sender S --type 0|1|2 [--config FILE] [--json]';

export async function run(args: string[]): Promise<number> {
  return withUsage(async () => {
    const parsed = parseArgs(args, { values: ['config', 'client', 'sender', 'type'], booleans: ['json'] }, USAGE);
    const [action, ...extra] = parsed.positionals;
    if (action !== 'add') throw unknownWordError('action', action, USAGE, 'add');
    rejectExtraArguments(extra, USAGE);
    const clientName = requireValue(parsed, 'client', USAGE);
    const sender = requireValue(parsed, 'sender', USAGE);
    const typeText = requireValue(parsed, 'type', USAGE);
    if (!/^[012]$/.test(typeText)) throw new UsageError('--type must be 0, 1 or 2', USAGE);
    const out = adminOutput(parsed.booleans.has('json'));
    return withAdminSession(parsed.values.get('config'), async ({ auth }) => {
      const added = auth.addSender({ clientName, sender, type: Number(typeText) });
      out.result(`added sender ${added.name} (type ${added.type}) to client ${added.clientName}`, added);
      return 0;
    });
  });
}

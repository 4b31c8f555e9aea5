/** `smsgate migrate [--config FILE] [--json]`: applies pending migrations and lists them. */
import { applyMigrations } from '../../store/database.js';
import { adminOutput, withStore } from '../admin-session.js';
import { parseArgs, rejectExtraArguments, withUsage } from '../args.js';

const USAGE = 'smsgate migrate [--config FILE] [--json]';

export async function run(args: string[]): Promise<number> {
  return withUsage(async () => {
    const parsed = parseArgs(args, { values: ['config'], booleans: ['json'] }, USAGE);
    rejectExtraArguments(parsed.positionals, USAGE);
    const out = adminOutput(parsed.booleans.has('json'));
    return withStore(parsed.values.get('config'), { migrate: false }, async (config, store) => {
      const applied = await applyMigrations(store);
      const text = applied.length === 0 ? `${config.database.path}: up to date` : `${config.database.path}: applied ${applied.join(', ')}`;
      out.result(text, { database: config.database.path, applied });
      return 0;
    });
  });
}

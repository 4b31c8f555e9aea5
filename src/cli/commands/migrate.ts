/**
 * `smsgate migrate [--config FILE] [--json]`: applies pending migrations and lists them, on the
 * database the config selects: SQLite (`database.path`) or PostgreSQL (`database.url`, named
 * without its password).
 */
import { maskKnownSecrets } from '../../common/secret-text.js';
import { isGatewayError } from '../../common/errors.js';
import { loadConfig } from '../../gateway/config.js';
import { applyDatabaseMigrations, openDatabase } from '../../store/sqlite/database.js';
import { adminOutput } from '../admin-session.js';
import { parseArgs, rejectExtraArguments, withUsage } from '../args.js';
import { exitCodeFor } from '../coded-exit.js';

const USAGE = 'smsgate migrate [--config FILE] [--json]';

export async function run(args: string[]): Promise<number> {
  return withUsage(async () => {
    const parsed = parseArgs(args, { values: ['config'], booleans: ['json'] }, USAGE);
    rejectExtraArguments(parsed.positionals, USAGE);
    const out = adminOutput(parsed.booleans.has('json'));
    try {
      const config = loadConfig(parsed.values.get('config'), process.env, { purpose: 'admin' });
      // The one command that makes a new database file (an installation's first step).
      const database = await openDatabase(config.database, { migrate: false, createIfMissing: true });
      try {
        const applied = await applyDatabaseMigrations(database);
        const text = applied.length === 0 ? `${database.describe}: up to date` : `${database.describe}: applied ${applied.join(', ')}`;
        out.result(text, { database: database.describe, applied });
        return 0;
      } finally {
        await database.close();
      }
    } catch (err) {
      // As every admin command (admin-session.ts withPorts): a coded failure is a message and exit 1.
      if (!isGatewayError(err)) throw err;
      process.stderr.write(`smsgate: ${maskKnownSecrets(err.message)}\n`);
      return exitCodeFor(err.code);
    }
  });
}

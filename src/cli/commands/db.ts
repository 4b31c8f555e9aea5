/**
 * `smsgate db backup FILE [--config FILE] [--json]`: an online, consistent copy of the SQLite
 * database while `serve` keeps running (src/store/sqlite/backup.ts). On a terminal it shows progress on
 * stderr. The secrets key file (database.keyFile) is not inside the database: the command names it,
 * and a restore needs both.
 */
import { GatewayError } from '../../common/errors.js';
import type { BackupProgress } from '../../store/sqlite/backup.js';
import { adminOutput, withPorts } from '../admin-session.js';
import { parseArgs, rejectExtraArguments, UsageError, unknownWordError, withUsage } from '../args.js';
import { ttyProgress, type TtyProgress } from '../tty-progress.js';

const USAGE = 'smsgate db backup FILE [--config FILE] [--json]';

/** Progress on stderr when it is a terminal: one line rewritten in place. */
function progressReporter(progress: TtyProgress | undefined): ((backup: BackupProgress) => void) | undefined {
  if (progress === undefined) return undefined;
  return ({ totalPages, copiedPages }) => {
    const percent = totalPages === 0 ? 100 : Math.floor((copiedPages / totalPages) * 100);
    progress.show(`backup: ${percent}% (${copiedPages}/${totalPages} pages)`);
  };
}

export async function run(args: string[]): Promise<number> {
  return withUsage(async () => {
    const parsed = parseArgs(args, { values: ['config'], booleans: ['json'] }, USAGE);
    const [action, file, ...extra] = parsed.positionals;
    if (action !== 'backup') throw unknownWordError('action', action, USAGE, 'backup');
    if (file === undefined || file === '') throw new UsageError('db backup needs the FILE to write', USAGE);
    rejectExtraArguments(extra, USAGE);
    const out = adminOutput(parsed.booleans.has('json'));
    // No migration: a backup copies the database as it is, even one a newer smsgate has migrated.
    return withPorts(parsed.values.get('config'), { migrate: false }, async ({ config, backup }) => {
      if (backup === undefined) throw new GatewayError('BACKEND_UNSUPPORTED', `db backup copies a SQLite database file; ${config.database.url === undefined ? 'this database' : 'a PostgreSQL database (database.url)'} is backed up with its own tools (pg_dump, pg_basebackup or a replica)`);
      const progress = ttyProgress(process.stderr);
      const startedMs = Date.now();
      const result = await backup.backup(file, progressReporter(progress));
      progress?.end();
      const elapsedMs = Date.now() - startedMs;
      out.result(
        `backed up ${config.database.path} to ${result.file}: ${result.bytes} bytes in ${elapsedMs} ms\n`
          + `keep ${config.database.keyFile} with it: stored secrets cannot be read without that key file`,
        { database: config.database.path, file: result.file, bytes: result.bytes, pages: result.totalPages, elapsedMs, keyFile: config.database.keyFile },
      );
      return 0;
    });
  });
}

/**
 * `smsgate user create --client NAME --username U (--password P | --password-stdin) [--admin]`
 * --password-stdin reads the password from standard input (first line), keeping it out of the
 * process list and shell history.
 */
import { adminOutput, withAdminSession } from '../admin-session.js';
import { parseArgs, rejectExtraArguments, requireValue, unknownWordError, UsageError, withUsage } from '../args.js';

const USAGE = 'smsgate user create --client NAME --username U (--password P | --password-stdin) [--admin] [--config FILE] [--json]';

async function readFirstLine(stream: NodeJS.ReadableStream): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk));
  return Buffer.concat(chunks).toString('utf8').split(/\r?\n/)[0] ?? '';
}

export async function run(args: string[]): Promise<number> {
  return withUsage(async () => {
    const parsed = parseArgs(args, { values: ['config', 'client', 'username', 'password'], booleans: ['json', 'admin', 'password-stdin'] }, USAGE);
    const [action, ...extra] = parsed.positionals;
    if (action !== 'create') throw unknownWordError('action', action, USAGE, 'create');
    rejectExtraArguments(extra, USAGE);
    const clientName = requireValue(parsed, 'client', USAGE);
    const username = requireValue(parsed, 'username', USAGE);
    const fromStdin = parsed.booleans.has('password-stdin');
    if (fromStdin === parsed.values.has('password')) throw new UsageError('give exactly one of --password and --password-stdin', USAGE);
    const password = fromStdin ? await readFirstLine(process.stdin) : (parsed.values.get('password') as string);
    if (password === '') throw new UsageError('the password must not be empty', USAGE);
    const out = adminOutput(parsed.booleans.has('json'));
    return withAdminSession(parsed.values.get('config'), async ({ auth }) => {
      const user = await auth.createUser({ clientName, username, password, isAdmin: parsed.booleans.has('admin') });
      out.result(`created user ${user.username} (id ${user.id}) of client ${user.clientName}${user.isAdmin ? ', administrator' : ''}`, user);
      return 0;
    });
  });
}

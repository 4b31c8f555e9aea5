/**
 * `smsgate user create --client NAME --username U (--password P | --password-stdin) [--admin]`,
 * `smsgate user list [--client NAME]`, `smsgate user deactivate|activate --username U` and
 * `smsgate user set-password --username U (--password P | --password-stdin)` and
 * `smsgate user set-admin --username U [--revoke]`.
 * --password-stdin reads the password from standard input (first line), keeping it out of the
 * process list and shell history. A password has at least MIN_PASSWORD_LENGTH characters. A
 * deactivated user keeps its tokens but gets 403 on the API and cannot log in (README "Tokens");
 * activate undoes it. A new password ends the user's refresh sessions. Only an administrator may
 * call the API (SPEC "Authentication" §4), so `user create` without --admin warns on stderr and
 * names `set-admin`, which makes an existing user one (or, with --revoke, no longer one).
 */
import { hashPassword } from '../../auth/password.js';
import { GatewayError } from '../../common/errors.js';
import { adminOutput, withAdminSession } from '../admin-session.js';
import { parseArgs, rejectExtraArguments, requireValue, unknownWordError, UsageError, withUsage, type ParsedArgs } from '../args.js';
import { formatTable, isoTime } from '../table.js';

const USAGE = [
  'smsgate user create --client NAME --username U (--password P | --password-stdin) [--admin] [--config FILE] [--json]',
  'smsgate user list [--client NAME] [--config FILE] [--json]',
  'smsgate user deactivate|activate --username U [--config FILE] [--json]',
  'smsgate user set-password --username U (--password P | --password-stdin) [--config FILE] [--json]',
  'smsgate user set-admin --username U [--revoke] [--config FILE] [--json]',
].join('\n       ');

/**
 * Characters (code points) a password needs at least, for every command that sets one. 12: the
 * spec and README name none; NIST SP 800-63B asks at least 8 and recommends allowing far longer,
 * and 12 keeps an offline guess of a scrypt hash out of reach for a passphrase of a few words.
 */
export const MIN_PASSWORD_LENGTH = 12;

async function readFirstLine(stream: NodeJS.ReadableStream): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk));
  return Buffer.concat(chunks).toString('utf8').split(/\r?\n/)[0] ?? '';
}

function only(parsed: ParsedArgs, action: string, allowed: readonly string[]): void {
  for (const flag of [...parsed.values.keys(), ...parsed.booleans]) {
    if (!['config', 'json', ...allowed].includes(flag)) throw new UsageError(`--${flag} does not apply to user ${action}`, USAGE);
  }
}

async function passwordFrom(parsed: ParsedArgs): Promise<string> {
  const fromStdin = parsed.booleans.has('password-stdin');
  if (fromStdin === parsed.values.has('password')) throw new UsageError('give exactly one of --password and --password-stdin', USAGE);
  const password = fromStdin ? await readFirstLine(process.stdin) : (parsed.values.get('password') as string);
  if (password === '') throw new UsageError('the password must not be empty', USAGE);
  if ([...password].length < MIN_PASSWORD_LENGTH) throw new UsageError(`the password must have at least ${MIN_PASSWORD_LENGTH} characters`, USAGE);
  return password;
}

export async function run(args: string[]): Promise<number> {
  return withUsage(async () => {
    const parsed = parseArgs(args, { values: ['config', 'client', 'username', 'password'], booleans: ['json', 'admin', 'password-stdin', 'revoke'] }, USAGE);
    const [action, ...extra] = parsed.positionals;
    rejectExtraArguments(extra, USAGE);
    const out = adminOutput(parsed.booleans.has('json'));
    const configPath = parsed.values.get('config');
    if (action === 'create') {
      only(parsed, action, ['client', 'username', 'password', 'password-stdin', 'admin']);
      const clientName = requireValue(parsed, 'client', USAGE);
      const username = requireValue(parsed, 'username', USAGE);
      const password = await passwordFrom(parsed);
      return withAdminSession(configPath, async ({ auth }) => {
        const user = await auth.createUser({ clientName, username, password, isAdmin: parsed.booleans.has('admin') });
        out.result(`created user ${user.username} (id ${user.id}) of client ${user.clientName}${user.isAdmin ? ', administrator' : ''}`, user);
        if (!user.isAdmin) {
          process.stderr.write(
            `smsgate: warning: ${user.username} is not an administrator, and only administrators may call the API ` +
              `(every request with its tokens is answered 403); make it one with: smsgate user set-admin --username ${user.username}\n`,
          );
        }
        return 0;
      });
    }
    if (action === 'list') {
      only(parsed, action, ['client']);
      const clientName = parsed.values.get('client');
      return withAdminSession(configPath, async ({ ports }) => {
        let clientId: number | undefined;
        if (clientName !== undefined) {
          clientId = (await ports.auth.clientByName(clientName))?.id;
          if (clientId === undefined) throw new GatewayError('CLIENT_NOT_FOUND', `no client named "${clientName}"`);
        }
        const rows = (await ports.admin.listUsers(clientId)).map((u) => ({
          id: u.id, username: u.username, client: u.client, isAdmin: u.isAdmin === 1, active: u.active === 1, createdAt: isoTime(u.createdAt),
        }));
        out.result(formatTable(['id', 'username', 'client', 'admin', 'active', 'created'],
          rows.map((u) => [u.id, u.username, u.client, u.isAdmin ? 'yes' : 'no', u.active ? 'yes' : 'no', u.createdAt]), 'no users'), rows);
        return 0;
      });
    }
    if (action === 'deactivate' || action === 'activate') {
      only(parsed, action, ['username']);
      const username = requireValue(parsed, 'username', USAGE);
      const active = action === 'activate';
      return withAdminSession(configPath, async ({ auth }) => {
        await auth.accounts.setUserActive(username, active);
        out.result(`user ${username} ${active ? 'activated' : 'deactivated'}`, { username, active });
        return 0;
      });
    }
    if (action === 'set-password') {
      only(parsed, action, ['username', 'password', 'password-stdin']);
      const username = requireValue(parsed, 'username', USAGE);
      const password = await passwordFrom(parsed);
      return withAdminSession(configPath, async ({ ports }) => {
        const user = await ports.auth.userByUsername(username);
        if (user === undefined) throw new GatewayError('USER_NOT_FOUND', `no user named "${username}"`);
        const { refreshSessionsRevoked } = await ports.admin.setUserPassword(user.userId, await hashPassword(password), Date.now());
        out.result(`password of user ${username} changed; ${refreshSessionsRevoked} refresh session${refreshSessionsRevoked === 1 ? '' : 's'} ended`,
          { username, passwordChanged: true, refreshSessionsRevoked });
        return 0;
      });
    }
    if (action === 'set-admin') {
      only(parsed, action, ['username', 'revoke']);
      const username = requireValue(parsed, 'username', USAGE);
      const isAdmin = !parsed.booleans.has('revoke');
      return withAdminSession(configPath, async ({ auth }) => {
        const result = await auth.accounts.setUserAdmin(username, isAdmin);
        const now = isAdmin ? 'an administrator: it may call the API' : 'not an administrator: the API answers its requests 403';
        out.result(`user ${result.username} ${result.changed ? 'is now' : 'was already'} ${now}`, result);
        return 0;
      });
    }
    throw unknownWordError('action', action, USAGE, 'create, list, deactivate, activate, set-password or set-admin');
  });
}

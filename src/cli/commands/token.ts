/**
 * `smsgate token create --username U [--expires-days N]` prints a new personal access token once
 * (only its SHA-256 is stored, it cannot be shown again); `smsgate token revoke --token T`.
 */
import { adminOutput, withAdminSession } from '../admin-session.js';
import { parseArgs, rejectExtraArguments, requireValue, unknownWordError, UsageError, withUsage } from '../args.js';

const USAGE = 'smsgate token create --username U [--expires-days N] [--config FILE] [--json]\n'
  + '       smsgate token revoke --token T [--config FILE] [--json]';

const DAY_MS = 86_400_000;
const MAX_EXPIRES_DAYS = 36_500;

function parseExpiresDays(raw: string | undefined): number | undefined {
  if (raw === undefined) return undefined;
  if (!/^[1-9][0-9]*$/.test(raw) || Number(raw) > MAX_EXPIRES_DAYS) throw new UsageError(`--expires-days must be a whole number of days from 1 to ${MAX_EXPIRES_DAYS}`, USAGE);
  return Number(raw);
}

export async function run(args: string[]): Promise<number> {
  return withUsage(async () => {
    const parsed = parseArgs(args, { values: ['config', 'username', 'expires-days', 'token'], booleans: ['json'] }, USAGE);
    const [action, ...extra] = parsed.positionals;
    rejectExtraArguments(extra, USAGE);
    const out = adminOutput(parsed.booleans.has('json'));
    if (action === 'create') {
      if (parsed.values.has('token')) throw new UsageError('--token does not apply to token create', USAGE);
      const username = requireValue(parsed, 'username', USAGE);
      const expiresDays = parseExpiresDays(parsed.values.get('expires-days'));
      return withAdminSession(parsed.values.get('config'), async ({ auth }) => {
        const expiresAt = expiresDays === undefined ? null : Date.now() + expiresDays * DAY_MS;
        const pat = auth.accounts.issuePersonalAccessToken(username, { expiresAt });
        out.result(pat.token, {
          id: pat.id, token: pat.token, hint: pat.hint, username: pat.username,
          expiresAt: pat.expiresAt === null ? null : new Date(pat.expiresAt).toISOString(),
        });
        return 0;
      });
    }
    if (action === 'revoke') {
      for (const flag of ['username', 'expires-days']) if (parsed.values.has(flag)) throw new UsageError(`--${flag} does not apply to token revoke`, USAGE);
      const token = requireValue(parsed, 'token', USAGE);
      return withAdminSession(parsed.values.get('config'), async ({ auth }) => {
        const revokedNow = auth.revokePat(token);
        out.result(revokedNow ? 'token revoked' : 'token was already revoked', { revoked: true, alreadyRevoked: !revokedNow });
        return 0;
      });
    }
    throw unknownWordError('action', action, USAGE, 'create or revoke');
  });
}

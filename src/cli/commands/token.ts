/**
 * `smsgate token create --username U [--expires-days N]` prints a new personal access token once
 * (only its SHA-256 is stored, it cannot be shown again); `smsgate token list --username U` shows
 * each token's hint, creation, last use, expiry and state, never the token; `smsgate token revoke
 * (--token T | --id N)` revokes one, by the token itself or by the id `token list` shows.
 */
import type { TokenListRow } from '../../store/sqlite/admin-queries.js';
import { GatewayError } from '../../common/errors.js';
import { adminOutput, withAdminSession } from '../admin-session.js';
import { parseArgs, rejectExtraArguments, requireValue, unknownWordError, UsageError, withUsage, type ParsedArgs } from '../args.js';
import { formatTable, isoTime } from '../table.js';

const USAGE_LINES = [
  'smsgate token create --username U [--expires-days N] [--config FILE] [--json]',
  'smsgate token list --username U [--config FILE] [--json]',
  'smsgate token revoke (--token T | --id N) [--config FILE] [--json]',
];
const USAGE = USAGE_LINES.join('\n       ');

const DAY_MS = 86_400_000;
const MAX_EXPIRES_DAYS = 36_500;

function parseExpiresDays(raw: string | undefined): number | undefined {
  if (raw === undefined) return undefined;
  if (!/^[1-9][0-9]*$/.test(raw) || Number(raw) > MAX_EXPIRES_DAYS) throw new UsageError(`--expires-days must be a whole number of days from 1 to ${MAX_EXPIRES_DAYS}`, USAGE);
  return Number(raw);
}

function only(parsed: ParsedArgs, action: string, allowed: readonly string[]): void {
  for (const flag of [...parsed.values.keys(), ...parsed.booleans]) {
    if (!['config', 'json', ...allowed].includes(flag)) throw new UsageError(`--${flag} does not apply to token ${action}`, USAGE);
  }
}

function tokenState(row: TokenListRow, nowMs: number): 'active' | 'revoked' | 'expired' {
  if (row.revokedAt !== null) return 'revoked';
  return row.expiresAt !== null && row.expiresAt <= nowMs ? 'expired' : 'active';
}

export async function run(args: string[]): Promise<number> {
  return withUsage(async () => {
    const parsed = parseArgs(args, { values: ['config', 'username', 'expires-days', 'token', 'id'], booleans: ['json'] }, USAGE);
    const [action, ...extra] = parsed.positionals;
    rejectExtraArguments(extra, USAGE);
    const out = adminOutput(parsed.booleans.has('json'));
    if (action === 'create') {
      only(parsed, action, ['username', 'expires-days']);
      const username = requireValue(parsed, 'username', USAGE);
      const expiresDays = parseExpiresDays(parsed.values.get('expires-days'));
      return withAdminSession(parsed.values.get('config'), async ({ auth }) => {
        const expiresAt = expiresDays === undefined ? null : Date.now() + expiresDays * DAY_MS;
        const pat = await auth.accounts.issuePersonalAccessToken(username, { expiresAt });
        out.result(pat.token, {
          id: pat.id, token: pat.token, hint: pat.hint, username: pat.username,
          expiresAt: pat.expiresAt === null ? null : new Date(pat.expiresAt).toISOString(),
        });
        return 0;
      });
    }
    if (action === 'list') {
      only(parsed, action, ['username']);
      const username = requireValue(parsed, 'username', USAGE);
      return withAdminSession(parsed.values.get('config'), async ({ ports }) => {
        const user = await ports.auth.userByUsername(username);
        if (user === undefined) throw new GatewayError('USER_NOT_FOUND', `no user named "${username}"`);
        const nowMs = Date.now();
        const rows = (await ports.admin.tokensOfUser(user.userId)).map((row) => ({
          id: row.id, hint: row.hint, state: tokenState(row, nowMs), createdAt: isoTime(row.createdAt),
          lastUsedAt: isoTime(row.lastUsedAt), expiresAt: isoTime(row.expiresAt), revokedAt: isoTime(row.revokedAt),
        }));
        out.result(formatTable(['id', 'hint', 'state', 'created', 'last used', 'expires'],
          rows.map((r) => [r.id, r.hint, r.state, r.createdAt, r.lastUsedAt, r.expiresAt]), `no tokens for user ${username}`), rows);
        return 0;
      });
    }
    if (action === 'revoke') {
      only(parsed, action, ['token', 'id']);
      const token = parsed.values.get('token');
      const idText = parsed.values.get('id');
      if ((token === undefined) === (idText === undefined)) throw new UsageError('give exactly one of --token and --id', USAGE);
      if (idText !== undefined && !/^[1-9][0-9]{0,14}$/.test(idText)) throw new UsageError('--id must be a token id as `token list` shows it', USAGE);
      return withAdminSession(parsed.values.get('config'), async ({ auth, ports }) => {
        let revokedNow: boolean;
        if (token !== undefined) {
          revokedNow = await auth.revokePat(token);
        } else {
          const row = await ports.admin.tokenById(Number(idText));
          if (row === undefined) throw new GatewayError('TOKEN_NOT_FOUND', `no personal access token with id ${idText ?? ''}`);
          revokedNow = await ports.auth.revokePat(row.id, Date.now());
        }
        out.result(revokedNow ? 'token revoked' : 'token was already revoked', { revoked: true, alreadyRevoked: !revokedNow });
        return 0;
      });
    }
    throw unknownWordError('action', action, USAGE, 'create, list or revoke');
  });
}

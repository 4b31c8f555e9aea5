/**
 * `smsgate config check [--config FILE] [--json]`: loads the config as `serve` would (environment
 * interpolation, schema, defaults, routes) and prints the effective config with secrets masked;
 * an invalid one exits 1 with the file and the key (`config/x.json: transports[0].window: must be
 * >= 1`). Nothing is opened: no database, no port, no device.
 */
import { redactUrlPassword } from '../../config/secret-text.js';
import { configPathFrom, loadConfig } from '../../gateway-config.js';
import { withCodedExit } from '../coded-exit.js';
import { adminOutput } from '../admin-session.js';
import { parseArgs, rejectExtraArguments, unknownWordError, withUsage } from '../args.js';

const USAGE = 'smsgate config check [--config FILE] [--json]';
export const MASK = '[redacted]';

/** Keys whose string value is a secret: transports[].password, devices[].pin, webhook secrets, bearer tokens. */
const SECRET_KEY = /(password|secret|token|pin|apikey)$/i;

/** A copy with secret values replaced by MASK, and the password of any URL with credentials by `***` (postgresql://u:***@h). */
export function maskSecrets(value: unknown, key = ''): unknown {
  if (Array.isArray(value)) return value.map((item) => maskSecrets(item, key));
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, maskSecrets(v, k)]));
  }
  if (typeof value !== 'string') return value;
  if (SECRET_KEY.test(key)) return MASK;
  // Any URL with a password (postgresql://gw:pw@host/db), whatever characters the password holds.
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(value)) return redactUrlPassword(value);
  return value;
}

export async function run(args: string[]): Promise<number> {
  return withUsage(async () => {
    const parsed = parseArgs(args, { values: ['config'], booleans: ['json'] }, USAGE);
    const [action, ...extra] = parsed.positionals;
    if (action !== 'check') throw unknownWordError('action', action, USAGE, 'check');
    rejectExtraArguments(extra, USAGE);
    const out = adminOutput(parsed.booleans.has('json'));
    return withCodedExit(() => {
      const file = configPathFrom(parsed.values.get('config'));
      const effective = maskSecrets(loadConfig(file));
      out.result(`${file}: valid; effective config (secrets masked):\n${JSON.stringify(effective, null, 2)}`, { file, valid: true, config: effective });
      return 0;
    });
  });
}

/**
 * Which config file a command reads when it is not told (docs/behaviour/install-and-config.md):
 *   1. `--config FILE`
 *   2. `SMSGATE_CONFIG`
 *   3. `./smsgate.json` (what `smsgate init` writes)
 *   4. `/etc/smsgate/smsgate.json` (the system-wide place, the systemd unit's)
 * A file named by 1 or 2 is used even when missing (its "file not found" names it); 3 and 4 are
 * used when they exist. Last, and only when running from the source checkout (the working
 * directory is the package's own root), the checkout's `config/default.json`, so `npm start` on a
 * fresh clone serves without a config of its own. Otherwise none is found: an error naming the
 * four places and `smsgate init`.
 */
import { existsSync } from 'node:fs';
import { GatewayError } from '../common/errors.js';
import type { Environment } from './interpolate.js';

export const LOCAL_CONFIG_FILE = 'smsgate.json';
export const SYSTEM_CONFIG_FILE = '/etc/smsgate/smsgate.json';

/** The search order as `--help` and the error print it. */
export const CONFIG_SEARCH_ORDER = ['--config FILE', 'SMSGATE_CONFIG', `./${LOCAL_CONFIG_FILE}`, SYSTEM_CONFIG_FILE] as const;

export interface ConfigSearch {
  /** Whether a file exists; existsSync unless a test says otherwise. */
  exists?: (file: string) => boolean;
  /** The source checkout's own default, when the command runs from one; undefined elsewhere. */
  sourceCheckoutDefault?: () => string | undefined;
}

export function configPathFrom(path: string | undefined, env: Environment = process.env, search: ConfigSearch = {}): string {
  if (path !== undefined) return path;
  const fromEnv = env['SMSGATE_CONFIG'];
  if (fromEnv !== undefined && fromEnv !== '') return fromEnv;
  const exists = search.exists ?? existsSync;
  for (const candidate of [LOCAL_CONFIG_FILE, SYSTEM_CONFIG_FILE]) if (exists(candidate)) return candidate;
  const fallback = search.sourceCheckoutDefault?.();
  if (fallback !== undefined) return fallback;
  throw new GatewayError(
    'CONFIG_INVALID',
    `no config file found: give --config FILE, set SMSGATE_CONFIG, or put one at ./${LOCAL_CONFIG_FILE} or ${SYSTEM_CONFIG_FILE}; ` +
      '`smsgate init` writes a starter ./smsgate.json',
    { details: { searched: [...CONFIG_SEARCH_ORDER] } },
  );
}

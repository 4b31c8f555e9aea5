/**
 * `smsgate config check [--config FILE] [--json]`: loads the config as `serve` would (environment
 * interpolation, schema, defaults, routes, modem profiles) and prints the effective config with
 * secrets masked; an invalid one exits 1 with the file and the key (`config/x.json:
 * transports[0].window: must be >= 1`). It also refuses what `serve` would refuse at start: a
 * cluster node without a shared key file, smppServer.tls files it cannot read, and a listener
 * whose port is in use (`api.port 8080 is in use`), found by opening and at once closing each
 * address. No device is opened; the database only
 * read-only, to warn about route client names no client has (route-clients-check.ts).
 *
 * `smsgate config schema` prints the JSON Schema of the file (config/smsgate.schema.json).
 *
 * `smsgate config reload [--config FILE] [--json]` asks the running serve to re-read its config
 * (src/cli/config-reload-request.ts: its admin listener, else SIGHUP to the pid holding the SQLite
 * database): prints what changed, or the error (file and key) and exits 1 when the serve refused it.
 */
import { serveKeyFileProblem } from '../../config/database.js';
import { redactUrlPassword } from '../../common/secret-text.js';
import { GatewayError } from '../../common/errors.js';
import { configJsonSchema, loadConfig, locateConfig, smppServerTlsProblem } from '../../gateway/config.js';
import { withCodedExit } from '../coded-exit.js';
import { adminOutput } from '../admin-session.js';
import { parseArgs, rejectExtraArguments, unknownWordError, UsageError, withUsage } from '../args.js';
import { configuredListeners, tryListen } from '../listen-check.js';
import { askAdminListener, signalServe, type ReloadAnswer } from '../config-reload-request.js';
import type { AdminOutput } from '../admin-session.js';
import { clientNamesOf, unknownRouteClients } from '../route-clients-check.js';

const USAGE = 'smsgate config check [--config FILE] [--json]\n       smsgate config reload [--config FILE] [--json]\n       smsgate config schema';
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
    if (action === 'schema') {
      rejectExtraArguments(extra, USAGE);
      if (parsed.values.size > 0 || parsed.booleans.size > 0) throw new UsageError('config schema takes no options', USAGE);
      process.stdout.write(`${JSON.stringify(configJsonSchema(), null, 2)}\n`);
      return 0;
    }
    if (action === 'reload') {
      rejectExtraArguments(extra, USAGE);
      return reload(parsed.values.get('config'), adminOutput(parsed.booleans.has('json')));
    }
    if (action !== 'check') throw unknownWordError('action', action, USAGE, 'check, reload or schema');
    rejectExtraArguments(extra, USAGE);
    const out = adminOutput(parsed.booleans.has('json'));
    return withCodedExit(async () => {
      const file = locateConfig(parsed.values.get('config'));
      const config = loadConfig(file);
      const keyFileProblem = serveKeyFileProblem(config.database);
      if (keyFileProblem !== null) throw keyFileProblem;
      const tlsProblem = smppServerTlsProblem(config);
      if (tlsProblem !== null) throw new GatewayError('CONFIG_INVALID', `${file}: ${tlsProblem.key}: ${tlsProblem.what}`, { details: { path: tlsProblem.key } });
      for (const listener of configuredListeners(config)) {
        const problem = await tryListen(listener);
        if (problem !== null) throw new GatewayError('CONFIG_INVALID', `${file}: ${problem}`, { details: { path: `${listener.section}.port` } });
      }
      const effective = maskSecrets(config);
      // Route client names are checked against the clients where the database can be read (a warning: a client may be created later).
      const names = config.routes.some((r) => r.clients !== undefined) ? clientNamesOf(config.database) : null;
      const warnings = names === null ? [] : unknownRouteClients(config.routes, names);
      if (!out.json) for (const warning of warnings) process.stderr.write(`${file}: warning: ${warning}\n`);
      out.result(`${file}: valid; effective config (secrets masked):\n${JSON.stringify(effective, null, 2)}`, { file, valid: true, config: effective, ...(warnings.length === 0 ? {} : { warnings }) });
      return 0;
    });
  });
}

function reload(configPath: string | undefined, out: AdminOutput): Promise<number> {
  return withCodedExit(async () => {
    const file = locateConfig(configPath);
    // Read for the admin listener and the database only: a transport's own keys may name
    // variables that only the serve's environment sets (the serve validates the whole file).
    const where = loadConfig(file, process.env, { purpose: 'admin' });
    const asked = where.admin === undefined ? { ok: false as const, why: 'the config has no admin section' } : await askAdminListener(where.admin);
    let answer: ReloadAnswer;
    if (asked.ok) {
      answer = asked.answer;
    } else {
      // The serve will not say what it made of the file: check it here, as it would, first.
      loadConfig(file);
      answer = signalServe(where.database, asked.why);
    }
    if (answer.via === 'signal') {
      out.result(`${file}: valid; sent SIGHUP to smsgate serve (pid ${answer.pid}); its log says what it applied (${asked.ok ? '' : asked.why})`, { file, via: 'signal', pid: answer.pid });
      return 0;
    }
    const { outcome } = answer;
    if (!outcome.reloaded) {
      if (out.json) out.result('', { via: 'admin', ...outcome });
      throw new GatewayError('CONFIG_INVALID', `${outcome.error.message} (reload refused: the running config stays)`);
    }
    const t = outcome.transports;
    const lines = [
      `${outcome.file ?? file}: reloaded by smsgate serve (${answer.url}); config ${outcome.configHash}`,
      `transports kept running: ${t.unchanged.join(', ') || 'none'}`,
      ...(t.added.length > 0 ? [`started: ${t.added.join(', ')}`] : []),
      ...(t.changed.length > 0 ? [`rebound with new settings: ${t.changed.join(', ')}`] : []),
      ...(t.removed.length > 0 ? [`drained and stopped: ${t.removed.join(', ')}`] : []),
      ...(outcome.restartNeeded.length > 0 ? [`need a restart (running values kept): ${outcome.restartNeeded.join(', ')}`] : []),
    ];
    out.result(lines.join('\n'), { via: 'admin', ...outcome });
    return 0;
  });
}

/**
 * `smsgate init [--dir DIR] [--json]`: a first config for a new installation. Writes DIR/smsgate.json
 * (DIR: the working directory unless given) with the simulator transport and a route to it, the API
 * and the admin listener on loopback, the database in DIR/data (a relative path: relative paths
 * resolve against the config file's directory), and `$schema` naming the published schema so an
 * editor completes and checks keys. It never overwrites: an existing file is exit 1 naming it.
 * Then it prints the next three commands: an account (client, administrator, token, sender id),
 * `serve`, and a first campaign with curl.
 */
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { LOCAL_CONFIG_FILE, PUBLISHED_SCHEMA_URL } from '../../config/index.js';
import { adminOutput } from '../admin-session.js';
import { parseArgs, rejectExtraArguments, withUsage } from '../args.js';
import { CODED_FAILURE_EXIT, withCodedExit } from '../coded-exit.js';

const USAGE = 'smsgate init [--dir DIR] [--json]';

/** What init writes: the shipped defaults a first run needs, nothing else (every other key has its default). */
export function starterConfig(): object {
  return {
    $schema: PUBLISHED_SCHEMA_URL,
    database: { path: 'data/smsgate.sqlite' },
    api: { host: '127.0.0.1', port: 8080 },
    transports: [{ name: 'sim', type: 'simulator' }],
    routes: [{ prefix: '', transport: 'sim' }],
    admin: { host: '127.0.0.1', port: 8081 },
  };
}

/** The commands to run next, with `--config FILE` when the file is not the working directory's smsgate.json. */
export function nextSteps(file: string): string[] {
  const here = relative(process.cwd(), file) === LOCAL_CONFIG_FILE;
  const config = here ? '' : ` --config ${quote(file)}`;
  return [
    `smsgate client create --name demo${config} && smsgate sender add --client demo --sender DEMO --type 0${config} && ` +
      `printf '%s\\n' 'choose-a-long-password' | smsgate user create --client demo --username admin --password-stdin --admin${config} && ` +
      `TOKEN=$(smsgate token create --username admin${config})`,
    `smsgate serve${config}`,
    `curl -s -X POST http://127.0.0.1:8080/v1/campaign -H "Authorization: Bearer $TOKEN" -H 'Content-Type: application/json' ` +
      `-d '{"text":"Hello from smsgate","from":"DEMO","recipientInfo":[{"msisdn":"0871234567"}]}'`,
  ];
}

function quote(path: string): string {
  return /^[A-Za-z0-9_./-]+$/.test(path) ? path : `'${path.replace(/'/g, `'\\''`)}'`;
}

export async function run(args: string[]): Promise<number> {
  return withUsage(async () => {
    const parsed = parseArgs(args, { values: ['dir'], booleans: ['json'] }, USAGE);
    rejectExtraArguments(parsed.positionals, USAGE);
    const out = adminOutput(parsed.booleans.has('json'));
    return withCodedExit(() => {
      const dir = resolve(parsed.values.get('dir') ?? '.');
      const file = join(dir, LOCAL_CONFIG_FILE);
      if (existsSync(file)) {
        process.stderr.write(`smsgate: ${file} already exists: not overwritten (remove it, or init another --dir)\n`);
        return CODED_FAILURE_EXIT;
      }
      const dataDir = join(dir, 'data');
      mkdirSync(dataDir, { recursive: true, mode: 0o700 });
      // 'wx': a file created since the check above is still not overwritten.
      writeFileSync(file, `${JSON.stringify(starterConfig(), null, 2)}\n`, { flag: 'wx', mode: 0o640 });
      const steps = nextSteps(file);
      out.result(
        [
          `wrote ${file}: simulator transport, API on http://127.0.0.1:8080, admin listener on http://127.0.0.1:8081, database in ${dataDir}`,
          'next:',
          ...steps.map((step, i) => `  ${i + 1}. ${step}`),
        ].join('\n'),
        { file, dataDir, next: steps },
      );
      return 0;
    });
  });
}

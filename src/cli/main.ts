#!/usr/bin/env node
/**
 * The `smsgate` command. Each command group lives in its own module under ./commands and is
 * loaded only when used, so `smsgate sms inspect` never opens a database or a serial port.
 * A command module exports `run(args: string[]): Promise<number>` (the exit code).
 * Help (`--help`, `help COMMAND`, `COMMAND [ACTION] --help`) and `--version` are answered here,
 * from the usage lines of the table below, for every command alike.
 */
import { realpathSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { CONFIG_SEARCH_ORDER } from '../config/locate.js';
import { maskKnownSecrets } from '../common/secret-text.js';
import { exitQuietlyOnClosedPipe } from './closed-pipe.js';
import { packageVersion } from '../common/package-version.js';

type CommandModule = { run(args: string[]): Promise<number> };

const COMMANDS: Record<string, { module: string; usage: string[] }> = {
  init: { module: './commands/init.js', usage: ['smsgate init [--dir DIR] [--json]'] },
  serve: { module: './commands/serve.js', usage: ['smsgate serve [--config FILE]'] },
  migrate: { module: './commands/migrate.js', usage: ['smsgate migrate [--config FILE] [--json]'] },
  config: { module: './commands/config.js', usage: ['smsgate config check [--config FILE] [--json]', 'smsgate config reload [--config FILE] [--json]', 'smsgate config schema'] },
  client: {
    module: './commands/client.js',
    usage: [
      'smsgate client create --name NAME [--webhook-url URL] [--webhook-secret SECRET] [--config FILE] [--json]',
      'smsgate client set-webhook --name NAME --url URL [--secret SECRET | --clear-secret] [--config FILE] [--json]',
      'smsgate client list [--config FILE] [--json]',
      'smsgate client deactivate --name NAME [--config FILE] [--json]',
      'smsgate client activate --name NAME [--config FILE] [--json]',
      'smsgate client set-inbound-webhook --name NAME (--url URL | --clear) [--config FILE] [--json]',
      'smsgate client set-optout --name NAME (--keywords STOP,STOPALL | --clear) [--config FILE] [--json]',
      'smsgate client set-rate --name NAME (--parts-per-second N | --unlimited) [--config FILE] [--json]',
    ],
  },
  credits: {
    module: './commands/credits.js',
    usage: [
      'smsgate credits show --client NAME [--config FILE] [--json]',
      'smsgate credits add --client NAME --credits N [--note TEXT] [--config FILE] [--json]',
      'smsgate credits set --client NAME --credits N [--config FILE] [--json]',
      'smsgate credits unlimited --client NAME [--config FILE] [--json]',
      'smsgate credits history --client NAME [--limit N] [--config FILE] [--json]',
    ],
  },
  'smpp-account': {
    module: './commands/smpp-account.js',
    usage: [
      'smsgate smpp-account add --client NAME --system-id ID --password PW [--max-binds N] [--allow-ip CIDR]... [--config FILE] [--json]',
      'smsgate smpp-account list [--config FILE] [--json]',
      'smsgate smpp-account remove --system-id ID [--config FILE] [--json]',
      'smsgate smpp-account set-password --system-id ID --password PW [--config FILE] [--json]',
    ],
  },
  user: {
    module: './commands/user.js',
    usage: [
      'smsgate user create --client NAME --username U (--password P | --password-stdin) [--admin] [--config FILE] [--json]',
      'smsgate user list [--client NAME] [--config FILE] [--json]',
      'smsgate user deactivate --username U [--config FILE] [--json]',
      'smsgate user activate --username U [--config FILE] [--json]',
      'smsgate user set-password --username U (--password P | --password-stdin) [--config FILE] [--json]',
      'smsgate user set-admin --username U [--revoke] [--config FILE] [--json]',
    ],
  },
  token: {
    module: './commands/token.js',
    usage: [
      'smsgate token create --username U [--expires-days N] [--config FILE] [--json]',
      'smsgate token list --username U [--config FILE] [--json]',
      'smsgate token revoke (--token T | --id N) [--config FILE] [--json]',
    ],
  },
  sender: {
    module: './commands/sender.js',
    usage: [
      'smsgate sender add --client NAME --sender S --type 0|1|2 [--config FILE] [--json]',
      'smsgate sender list [--client NAME] [--config FILE] [--json]',
      'smsgate sender remove --client NAME --sender S [--config FILE] [--json]',
    ],
  },
  webhook: {
    module: './commands/webhook.js',
    usage: [
      'smsgate webhook list [--failed] [--client NAME] [--config FILE] [--json]',
      'smsgate webhook replay --client NAME [--since TIME] [--now] [--config FILE] [--json]',
    ],
  },
  campaign: {
    module: './commands/campaign.js',
    usage: ['smsgate campaign list [--client NAME] [--state S] [--limit N] [--config FILE] [--json]', 'smsgate campaign show ID [--config FILE] [--json]'],
  },
  message: { module: './commands/message.js', usage: ['smsgate message show --msisdn N [--campaign ID] [--config FILE] [--json]'] },
  db: { module: './commands/db.js', usage: ['smsgate db backup FILE [--config FILE] [--json]'] },
  sms: { module: './commands/sms.js', usage: ['smsgate sms inspect --text T'] },
  pdu: { module: './commands/pdu.js', usage: ['smsgate pdu encode --to MSISDN --text T [--status-report]', 'smsgate pdu decode HEX'] },
  modem: { module: './commands/modem.js', usage: ['smsgate modem probe --path DEV [--profile NAME]'] },
  status: { module: './commands/status.js', usage: ['smsgate status [--config FILE] [--json]'] },
  optout: {
    module: './commands/optout.js',
    usage: [
      'smsgate optout list --client NAME [--config FILE] [--json]',
      'smsgate optout add --client NAME --msisdn N [--config FILE] [--json]',
      'smsgate optout remove --client NAME --msisdn N [--config FILE] [--json]',
    ],
  },
  simulate: { module: './commands/simulate.js', usage: ['smsgate simulate inbound --from N --to N --text T [--transport NAME] [--config FILE] [--json]'] },
  inbound: {
    module: './commands/inbound.js',
    usage: [
      'smsgate inbound route add --client NAME --to NUMBER [--config FILE] [--json]',
      'smsgate inbound route list [--config FILE] [--json]',
      'smsgate inbound route remove --to NUMBER [--config FILE] [--json]',
      'smsgate inbound list [--unrouted] [--limit N] [--config FILE] [--json]',
    ],
  },
};

/** How a command finds its config (src/config/locate.ts), under every usage that takes --config. */
const CONFIG_SEARCH_HELP = [
  '',
  `config file, the first found: ${CONFIG_SEARCH_ORDER.join(', ')}`,
  '(and config/default.json when run from the source checkout); `smsgate init` writes a starter ./smsgate.json',
].join('\n');

export function usage(): string {
  return ['usage: smsgate <command> [options]', '', ...Object.values(COMMANDS).flatMap((c) => c.usage.map((line) => `  ${line}`)), CONFIG_SEARCH_HELP].join('\n');
}

const HELP_FLAGS = new Set(['--help', '-h']);

/**
 * The usage lines of one command; with an action or subcommand it has (`token revoke`), only that
 * one's lines, else all of the command's.
 */
export function commandUsage(name: string, action?: string): string | undefined {
  const command = COMMANDS[name];
  if (command === undefined) return undefined;
  const ofAction = action === undefined ? [] : command.usage.filter((line) => line === `smsgate ${name} ${action}` || line.startsWith(`smsgate ${name} ${action} `));
  const lines = ofAction.length > 0 ? ofAction : command.usage;
  const text = lines.map((line, i) => `${i === 0 ? 'usage:' : '      '} ${line}`).join('\n');
  return lines.some((line) => line.includes('--config')) ? `${text}\n${CONFIG_SEARCH_HELP}` : text;
}

function unknownCommand(name: string): number {
  process.stderr.write(`smsgate: unknown command '${name}'\n${usage()}\n`);
  return 2;
}

export async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined) {
    process.stderr.write(`${usage()}\n`);
    return 2;
  }
  if (HELP_FLAGS.has(name) || (name === 'help' && rest.length === 0)) {
    process.stdout.write(`${usage()}\n`);
    return 0;
  }
  if (name === '--version' || name === '-V') {
    // Every admin command, --version included, has --json.
    process.stdout.write(rest.includes('--json') ? `${JSON.stringify({ version: packageVersion() })}\n` : `${packageVersion()}\n`);
    return 0;
  }
  if (name === 'help') {
    const [topic, action] = rest;
    const text = commandUsage(topic ?? '', action);
    if (text === undefined) return unknownCommand(topic ?? '');
    process.stdout.write(`${text}\n`);
    return 0;
  }
  const command = COMMANDS[name];
  if (command === undefined) return unknownCommand(name);
  if (rest.some((arg) => HELP_FLAGS.has(arg))) {
    const action = rest[0] !== undefined && !rest[0].startsWith('-') ? rest[0] : undefined;
    process.stdout.write(`${commandUsage(name, action) ?? ''}\n`);
    return 0;
  }
  const mod = (await import(command.module)) as CommandModule;
  return mod.run(rest);
}

/**
 * True when this module is the program node was started with. npm installs the command as a
 * symlink (node_modules/.bin/smsgate, npx, npm i -g) and node loads the module by its real path,
 * so both sides are compared as real paths.
 */
function isMainModule(): boolean {
  const script = process.argv[1];
  if (script === undefined) return false;
  try {
    return realpathSync(script) === realpathSync(fileURLToPath(import.meta.url));
  } catch {
    return false;
  }
}

if (isMainModule()) {
  exitQuietlyOnClosedPipe();
  main(process.argv.slice(2)).then(
    (code) => {
      process.exitCode = code;
    },
    (err: unknown) => {
      const message = err instanceof Error ? err.message : String(err);
      process.stderr.write(`smsgate: ${maskKnownSecrets(message)}\n`);
      process.exitCode = 1;
    },
  );
}

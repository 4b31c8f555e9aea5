#!/usr/bin/env node
/**
 * The `smsgate` command. Each command group lives in its own module under ./commands and is
 * loaded only when used, so `smsgate sms inspect` never opens a database or a serial port.
 * A command module exports `run(args: string[]): Promise<number>` (the exit code).
 */
import { pathToFileURL } from 'node:url';

type CommandModule = { run(args: string[]): Promise<number> };

const COMMANDS: Record<string, { module: string; usage: string[] }> = {
  serve: { module: './commands/serve.js', usage: ['smsgate serve [--config FILE]'] },
  migrate: { module: './commands/migrate.js', usage: ['smsgate migrate [--config FILE] [--json]'] },
  client: {
    module: './commands/client.js',
    usage: [
      'smsgate client create --name NAME [--webhook-url URL] [--webhook-secret SECRET] [--config FILE] [--json]',
      'smsgate client set-webhook --name NAME --url URL [--secret SECRET | --clear-secret] [--config FILE] [--json]',
      'smsgate client set-inbound-webhook --name NAME (--url URL | --clear) [--config FILE] [--json]',
      'smsgate client set-optout --name NAME (--keywords STOP,STOPALL | --clear) [--config FILE] [--json]',
    ],
  },
  user: { module: './commands/user.js', usage: ['smsgate user create --client NAME --username U (--password P | --password-stdin) [--admin] [--config FILE] [--json]'] },
  token: {
    module: './commands/token.js',
    usage: ['smsgate token create --username U [--expires-days N] [--config FILE] [--json]', 'smsgate token revoke --token T [--config FILE] [--json]'],
  },
  sender: { module: './commands/sender.js', usage: ['smsgate sender add --client NAME --sender S --type 0|1|2 [--config FILE] [--json]'] },
  webhook: {
    module: './commands/webhook.js',
    usage: [
      'smsgate webhook list [--failed] [--client NAME] [--config FILE] [--json]',
      'smsgate webhook replay --client NAME [--since TIME] [--now] [--config FILE] [--json]',
    ],
  },
  sms: { module: './commands/sms.js', usage: ['smsgate sms inspect --text T'] },
  pdu: { module: './commands/pdu.js', usage: ['smsgate pdu encode --to MSISDN --text T [--status-report]', 'smsgate pdu decode HEX'] },
  modem: { module: './commands/modem.js', usage: ['smsgate modem probe --path DEV [--profile NAME]'] },
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

export function usage(): string {
  return ['usage: smsgate <command> [options]', '', ...Object.values(COMMANDS).flatMap((c) => c.usage.map((line) => `  ${line}`))].join('\n');
}

export async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined) {
    process.stderr.write(`${usage()}\n`);
    return 2;
  }
  if (name === '--help' || name === '-h' || name === 'help') {
    process.stdout.write(`${usage()}\n`);
    return 0;
  }
  const command = COMMANDS[name];
  if (command === undefined) {
    process.stderr.write(`smsgate: unknown command '${name}'\n${usage()}\n`);
    return 2;
  }
  const mod = (await import(command.module)) as CommandModule;
  return mod.run(rest);
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  main(process.argv.slice(2)).then(
    (code) => {
      process.exitCode = code;
    },
    (err: unknown) => {
      const message = err instanceof Error ? err.message : String(err);
      process.stderr.write(`smsgate: ${message}\n`);
      process.exitCode = 1;
    },
  );
}

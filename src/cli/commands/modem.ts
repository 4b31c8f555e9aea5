/**
 * `smsgate modem probe --path DEV [--profile NAME]`: prints the modem's manufacturer, model,
 * revision, IMEI, SIM state, signal, registration and operator as one JSON line.
 */
import { probeModem } from '../../transports/modem/probe.js';
import { parseArgs, rejectExtraArguments, requireValue, unknownWordError, withUsage } from '../args.js';
import { withCodedExit } from '../coded-exit.js';

const USAGE = 'smsgate modem probe --path DEV [--profile NAME]';

export async function run(args: string[]): Promise<number> {
  return withUsage(async () => {
    const [subcommand, ...rest] = args;
    if (subcommand !== 'probe') {
      throw unknownWordError('subcommand', subcommand, USAGE);
    }
    const parsed = parseArgs(rest, { values: ['path', 'profile'] }, USAGE);
    rejectExtraArguments(parsed.positionals, USAGE);
    const path = requireValue(parsed, 'path', USAGE);
    return withCodedExit(async () => {
      const result = await probeModem(path, parsed.values.get('profile') ?? 'generic');
      process.stdout.write(`${JSON.stringify(result)}\n`);
      return 0;
    });
  });
}

/**
 * `smsgate modem probe --path DEV [--profile NAME]`: prints the modem's manufacturer, model,
 * revision, IMEI, SIM state, signal, registration and operator as one JSON line.
 */
import { isGatewayError } from '../../errors.js';
import { probeModem } from '../../transports/modem/probe.js';
import { parseArgs, requireValue, UsageError, withUsage } from '../args.js';

const USAGE = 'smsgate modem probe --path DEV [--profile NAME]';

export async function run(args: string[]): Promise<number> {
  return withUsage(async () => {
    const [subcommand, ...rest] = args;
    if (subcommand !== 'probe') {
      throw new UsageError(subcommand === undefined ? 'missing subcommand' : `unknown subcommand '${subcommand}'`, USAGE);
    }
    const parsed = parseArgs(rest, { values: ['path', 'profile'] }, USAGE);
    if (parsed.positionals.length > 0) throw new UsageError(`unexpected argument '${parsed.positionals[0] ?? ''}'`, USAGE);
    const path = requireValue(parsed, 'path', USAGE);
    try {
      const result = await probeModem(path, parsed.values.get('profile') ?? 'generic');
      process.stdout.write(`${JSON.stringify(result)}\n`);
      return 0;
    } catch (err) {
      if (!isGatewayError(err)) throw err;
      process.stderr.write(`smsgate: ${err.code}: ${err.message}\n`);
      return 1;
    }
  });
}

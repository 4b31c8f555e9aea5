/**
 * `smsgate sms inspect --text T`: prints how the SMS core sees a text, as one JSON line
 * {"encoding","units","parts","text"} with the text after the specification's replacements.
 */
import { analyzeText } from '../../sms/index.js';
import { parseArgs, rejectExtraArguments, requireValue, unknownWordError, withUsage } from '../args.js';

const USAGE = 'smsgate sms inspect --text T';

export async function run(args: string[]): Promise<number> {
  return withUsage(async () => {
    const [subcommand, ...rest] = args;
    if (subcommand !== 'inspect') {
      throw unknownWordError('subcommand', subcommand, USAGE);
    }
    const parsed = parseArgs(rest, { values: ['text'] }, USAGE);
    rejectExtraArguments(parsed.positionals, USAGE);
    const text = requireValue(parsed, 'text', USAGE);
    const { encoding, units, parts, text: replaced } = analyzeText(text);
    process.stdout.write(`${JSON.stringify({ encoding, units, parts, text: replaced })}\n`);
    return 0;
  });
}

/**
 * `smsgate pdu encode --to MSISDN --text T [--status-report]` prints one SMS-SUBMIT PDU per part
 * (hex, SMSC octet 00 first, as written after the AT+CMGS prompt), one per line.
 * `smsgate pdu decode HEX` prints the decoded PDU as one JSON line, with the text and the
 * concatenation info also at the top level for scripts (`jq .text`).
 */
import { decodePdu, encodeTextSubmitParts } from '../../pdu/index.js';
import { normalizeMsisdn } from '../../sms/index.js';
import { parseArgs, rejectExtraArguments, requireValue, unknownWordError, UsageError, withUsage } from '../args.js';
import { withCodedExit } from '../coded-exit.js';

const USAGE = 'smsgate pdu encode --to MSISDN --text T [--status-report] | pdu decode HEX';

export async function run(args: string[]): Promise<number> {
  return withUsage(async () => {
    const [subcommand, ...rest] = args;
    if (subcommand === 'encode') return encode(rest);
    if (subcommand === 'decode') return decode(rest);
    throw unknownWordError('subcommand', subcommand, USAGE);
  });
}

function encode(args: string[]): number {
  const parsed = parseArgs(args, { values: ['to', 'text'], booleans: ['status-report'] }, USAGE);
  rejectExtraArguments(parsed.positionals, USAGE);
  const to = normalizeMsisdn(requireValue(parsed, 'to', USAGE));
  if (!to.ok) throw new UsageError(`--to: ${to.reason}`, USAGE);
  const text = requireValue(parsed, 'text', USAGE);
  if (text.length === 0) throw new UsageError('--text must not be empty', USAGE);
  const parts = encodeTextSubmitParts(to.msisdn, text, { statusReport: parsed.booleans.has('status-report') });
  process.stdout.write(parts.map((p) => `${p.hex}\n`).join(''));
  return 0;
}

function decode(args: string[]): Promise<number> {
  const parsed = parseArgs(args, {}, USAGE);
  const [hex, extra] = parsed.positionals;
  if (hex === undefined) throw new UsageError('missing HEX', USAGE);
  if (extra !== undefined) throw new UsageError(`unexpected argument '${extra}'`, USAGE);
  if (!/^(?:[0-9A-Fa-f]{2})+$/.test(hex)) throw new UsageError('HEX must be an even number of hex digits', USAGE);
  return withCodedExit(() => {
    const decoded = decodePdu(hex);
    const userData = decoded.userData;
    const summary = userData === null ? {} : { text: userData.text, concat: userData.concat };
    process.stdout.write(`${JSON.stringify({ ...decoded, ...summary })}\n`);
    return 0;
  });
}

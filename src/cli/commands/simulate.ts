/**
 * `smsgate simulate inbound --from N --to N --text T [--transport NAME]`: a phone texting a number
 * served by a simulator transport. The message is written into the gateway's database as that
 * transport's parts, through the same InboundService a running `smsgate serve` uses (reassembly,
 * routing, opt-out keywords, the webhook outbox), in its own transactions. A running serve sends
 * the inbound webhook within its webhook poll interval (200 ms); with none running it is sent at
 * the next start, and `GET /v1/inbound` shows the message at once. Chosen over a control port:
 * nothing to listen on or secure, and it works the same with or without a running server
 * (SQLite in WAL mode takes the CLI's writes while serve runs, as the other admin commands do).
 */
import { randomInt } from 'node:crypto';
import { InboundService } from '../../inbound/inbound-service.js';
import { simulatedInboundParts } from '../../inbound/simulated-inbound.js';
import { silentLogger } from '../../common/log.js';
import { numberingPlanFor } from '../../sms/index.js';
import { adminOutput, withPorts } from '../admin-session.js';
import { parseArgs, rejectExtraArguments, requireValue, unknownWordError, UsageError, withUsage } from '../args.js';

const USAGE = 'smsgate simulate inbound --from N --to N --text T [--transport NAME] [--config FILE] [--json]';
const ADDRESS = /^\+?[0-9A-Za-z]{1,20}$/;

export async function run(args: string[]): Promise<number> {
  return withUsage(async () => {
    const [subcommand, ...rest] = args;
    if (subcommand !== 'inbound') throw unknownWordError('subcommand', subcommand, USAGE, 'inbound');
    const parsed = parseArgs(rest, { values: ['config', 'from', 'to', 'text', 'transport'], booleans: ['json'] }, USAGE);
    rejectExtraArguments(parsed.positionals, USAGE);
    const from = requireValue(parsed, 'from', USAGE);
    const to = requireValue(parsed, 'to', USAGE);
    const text = requireValue(parsed, 'text', USAGE);
    for (const [flag, value] of [['from', from], ['to', to]] as const) {
      if (!ADDRESS.test(value)) throw new UsageError(`--${flag} '${value}' must be a number (digits, optional +) or an alphanumeric id, at most 20 characters`, USAGE);
    }
    if (text.length === 0) throw new UsageError('--text must not be empty', USAGE);
    let parts;
    try {
      parts = simulatedInboundParts({ from, to, text, reference: randomInt(256), receivedAt: new Date().toISOString() });
    } catch (err) {
      throw new UsageError(`--text is too long: ${err instanceof Error ? err.message : String(err)}`, USAGE);
    }
    const out = adminOutput(parsed.booleans.has('json'));
    return withPorts(parsed.values.get('config'), { migrate: true }, async ({ config, ports }) => {
      const simulators = config.transports.filter((t) => t.type === 'simulator').map((t) => t.name);
      const wanted = parsed.values.get('transport');
      const transport = wanted ?? simulators[0];
      if (transport === undefined || !simulators.includes(transport)) {
        const known = simulators.length === 0 ? 'the config has no simulator transport' : `simulator transports: ${simulators.join(', ')}`;
        throw new UsageError(wanted === undefined ? `${known}: nothing to inject into` : `--transport ${wanted} is not a simulator transport of this config (${known})`, USAGE);
      }
      const service = new InboundService({ store: ports.inbound, logger: silentLogger(), wakeWebhooks: () => undefined, numbering: numberingPlanFor(config.numbering.country) });
      let outcome = await service.receive(transport, parts[0] as (typeof parts)[number]);
      for (const part of parts.slice(1)) outcome = await service.receive(transport, part);
      if (outcome.kind !== 'message') throw new Error(`the simulated message did not complete (${outcome.kind})`);
      const owner = outcome.clientId === null ? null : ((await ports.inbound.clientName(outcome.clientId)) as string);
      const result = { messageId: outcome.publicId, transport, parts: parts.length, client: owner, optedOut: outcome.optedOut };
      out.result(owner === null ? `message ${result.messageId} stored unrouted (no route for ${to})` : `message ${result.messageId} stored for client ${owner}`, result);
      return 0;
    });
  });
}

/**
 * `smsgate message show --msisdn N [--campaign ID]`: what happened to the messages to one number,
 * newest campaign first: the recipient's summary status, each part's send state, transport, message
 * id, attempts and last status, the receipts matched to it, and every webhook row with its attempts
 * and last error. The number is normalised as the API does, with the config's numbering.country
 *: under IE, 0871234567 finds 353871234567; under US, 2125550123 finds 12125550123.
 */
import { GatewayError } from '../../common/errors.js';
import { normalizeMsisdn, numberingPlanFor } from '../../sms/index.js';
import type { MessageDetail } from '../../store/sqlite/admin-queries.js';
import { adminOutput, withPorts } from '../admin-session.js';
import { parseArgs, rejectExtraArguments, requireValue, unknownWordError, UsageError, withUsage } from '../args.js';
import { isoTime } from '../table.js';

const USAGE = 'smsgate message show --msisdn N [--campaign ID] [--config FILE] [--json]';

function messageJson(m: MessageDetail) {
  return {
    campaign: m.campaignId, client: m.client, msisdn: m.msisdn, clientReference: m.clientReference, status: m.status,
    lastStatus: m.lastStatus, updatedAt: isoTime(m.updatedAt),
    parts: m.parts.map((p) => ({
      part: p.partNumber, of: p.partsTotal, state: p.state, transport: p.transport, messageId: p.messageId, attempts: p.attempts,
      lastStatus: p.lastStatus, lastErrorCode: p.lastErrorCode, submittedAt: isoTime(p.submittedAt), finalAt: isoTime(p.finalAt),
      receipts: p.receipts.map((r) => ({ status: r.status, final: r.final === 1, errorCode: r.errorCode, doneAt: r.doneAt, receivedAt: isoTime(r.receivedAt), raw: r.raw })),
    })),
    webhooks: m.webhooks.map((w) => ({
      id: w.id, state: w.state, attempts: w.attempts, lastError: w.lastError, body: w.body,
      createdAt: isoTime(w.createdAt), deliveredAt: isoTime(w.deliveredAt), deadAt: isoTime(w.deadAt),
    })),
  };
}

function messageText(m: ReturnType<typeof messageJson>): string {
  const lines = [`${m.msisdn} in campaign ${m.campaign} (client ${m.client}${m.clientReference === null ? '' : `, reference ${m.clientReference}`}): ${m.status}${m.lastStatus === null ? '' : ` (${m.lastStatus})`}`];
  for (const p of m.parts) {
    lines.push(`  part ${p.part}/${p.of}: ${p.state} via ${p.transport ?? '-'}, message id ${p.messageId ?? '-'}, ${p.attempts} attempt(s), last status ${p.lastStatus ?? '-'}${p.lastErrorCode === null ? '' : ` (${p.lastErrorCode})`}, submitted ${p.submittedAt ?? '-'}, final ${p.finalAt ?? '-'}`);
    for (const r of p.receipts) lines.push(`    receipt ${r.status}${r.errorCode === null ? '' : ` err ${r.errorCode}`} received ${r.receivedAt ?? '-'}`);
  }
  if (m.parts.length === 0) lines.push('  no parts yet');
  for (const w of m.webhooks) {
    lines.push(`  webhook ${w.id}: ${w.state} after ${w.attempts} attempt(s)${w.lastError === null ? '' : `, last error ${w.lastError}`}: ${w.body}`);
  }
  return lines.join('\n');
}

export async function run(args: string[]): Promise<number> {
  return withUsage(async () => {
    const parsed = parseArgs(args, { values: ['config', 'msisdn', 'campaign'], booleans: ['json'] }, USAGE);
    const [action, ...extra] = parsed.positionals;
    if (action !== 'show') throw unknownWordError('action', action, USAGE, 'show');
    rejectExtraArguments(extra, USAGE);
    const raw = requireValue(parsed, 'msisdn', USAGE);
    // The shape checks do not depend on the numbering plan: a malformed number is a usage error before the store opens.
    const shape = normalizeMsisdn(raw);
    if (!shape.ok) throw new UsageError(`--msisdn: ${shape.reason}`, USAGE);
    const campaignId = parsed.values.get('campaign')?.toLowerCase();
    const out = adminOutput(parsed.booleans.has('json'));
    return withPorts(parsed.values.get('config'), { migrate: true }, async ({ config, ports }) => {
      const number = normalizeMsisdn(raw, numberingPlanFor(config.numbering.country));
      if (!number.ok) throw new UsageError(`--msisdn: ${number.reason}`, USAGE);
      const messages = (await ports.admin.messagesTo(number.msisdn, campaignId)).map(messageJson);
      if (messages.length === 0) {
        throw new GatewayError('MESSAGE_NOT_FOUND', `no message to ${number.msisdn}${campaignId === undefined ? '' : ` in campaign ${campaignId}`}`);
      }
      out.result(messages.map(messageText).join('\n'), messages);
      return 0;
    });
  });
}

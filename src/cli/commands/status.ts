/**
 * `smsgate status [--config FILE] [--json]`: the /status.json facts. Asks the running
 * serve's admin listener (config's admin host and port, with admin.token when set); when none
 * answers, or the config has no admin section, it prints what the database alone can tell and says
 * so (binds and recent errors are known only to a running serve).
 */
import type { AdminConfig } from '../../admin/admin-config.js';
import { formatOutcomes } from '../../admin/campaign-outcomes.js';
import { storedStatusFacts, type StatusFacts } from '../../admin/status-facts.js';
import { clientRateText, rateText, smppRateText, smppWindowText } from '../../admin/status-page.js';
import { loadConfig } from '../../gateway/config.js';
import { maskKnownSecrets } from '../../common/secret-text.js';
import { isGatewayError } from '../../common/errors.js';
import { withPorts } from '../admin-session.js';
import { parseArgs, rejectExtraArguments, withUsage } from '../args.js';

const USAGE = 'smsgate status [--config FILE] [--json]';
const FETCH_TIMEOUT_MS = 2_000;

type Fetched = { ok: true; facts: StatusFacts } | { ok: false; why: string };

export async function run(args: string[]): Promise<number> {
  return withUsage(async () => {
    const parsed = parseArgs(args, { values: ['config'], booleans: ['json', 'help'] }, USAGE);
    if (parsed.booleans.has('help')) {
      process.stdout.write(`usage: ${USAGE}\n`);
      return 0;
    }
    rejectExtraArguments(parsed.positionals, USAGE);
    const json = parsed.booleans.has('json');
    const configPath = parsed.values.get('config');
    let admin: AdminConfig | undefined;
    try {
      admin = loadConfig(configPath).admin;
    } catch (err) {
      if (!isGatewayError(err)) throw err;
      process.stderr.write(`smsgate: ${maskKnownSecrets(err.message)}\n`);
      return 1;
    }
    const fetched: Fetched = admin === undefined ? { ok: false, why: 'the config has no admin section' } : await fetchLive(admin);
    if (fetched.ok) {
      print(fetched.facts, json, null);
      return 0;
    }
    return withPorts(configPath, { migrate: true }, async ({ config, ports }) => {
      const facts = await storedStatusFacts(ports.status, config.transports.map((t) => t.name), Date.now, undefined, config.credits.lowThreshold);
      print(facts, json, `smsgate serve is not answering (${fetched.why}): this is what the database alone tells; binds and recent errors are unknown`);
      return 0;
    });
  });
}

/** The admin listener's address as a client reaches it (a wildcard bind is reached on loopback). */
export function adminUrl(admin: AdminConfig): string {
  const host = admin.host === '0.0.0.0' ? '127.0.0.1' : admin.host === '::' ? '::1' : admin.host;
  return `http://${host.includes(':') ? `[${host}]` : host}:${admin.port}`;
}

async function fetchLive(admin: AdminConfig): Promise<Fetched> {
  const url = `${adminUrl(admin)}/status.json`;
  try {
    const response = await fetch(url, {
      headers: admin.token === undefined ? {} : { authorization: `Bearer ${admin.token}` },
      signal: AbortSignal.timeout(FETCH_TIMEOUT_MS),
    });
    if (response.status !== 200) {
      await response.arrayBuffer();
      return { ok: false, why: `${url} answered ${response.status}${response.status === 401 ? ': admin.token does not match the running serve' : ''}` };
    }
    return { ok: true, facts: (await response.json()) as StatusFacts };
  } catch (err) {
    const cause = (err as { cause?: { code?: string } }).cause?.code ?? (err instanceof Error ? err.name : String(err));
    return { ok: false, why: `${url}: ${cause}` };
  }
}

function print(facts: StatusFacts, json: boolean, note: string | null): void {
  if (json) {
    process.stdout.write(`${JSON.stringify(note === null ? facts : { ...facts, note }, null, 2)}\n`);
    return;
  }
  process.stdout.write(`${formatStatus(facts, note).join('\n')}\n`);
}

export function formatStatus(facts: StatusFacts, note: string | null): string[] {
  const lines = [`smsgate status at ${facts.generatedAt} (from ${facts.source === 'serve' ? 'the running serve' : 'the database only'})`];
  if (note !== null) lines.push(`note: ${note}`);
  if (facts.gateway !== null) lines.push(`smsgate ${facts.gateway.version}, up ${facts.gateway.uptimeSeconds} s (since ${facts.gateway.startedAt})`);
  if (facts.readiness !== null) {
    lines.push(facts.readiness.ready ? 'ready' : 'NOT READY (GET /ready answers 503):');
    for (const reason of facts.readiness.reasons) lines.push(`  ${reason}`);
  }
  // Older serves answer without these: `?? null` keeps their facts printable.
  const configHash = facts.configHash ?? null;
  if (configHash !== null) lines.push(`config ${configHash}`);
  lines.push('', 'transports:');
  if (facts.transports === null) lines.push('  unknown (serve not answering)');
  for (const t of facts.transports ?? []) {
    lines.push(`  ${t.name} (${t.type}) ${t.state}${t.since === null ? '' : ` since ${t.since}`}${t.detail === null ? '' : `: ${t.detail}`}; ${rateText(t)}; window ${t.windowUsed}/${t.windowSize}`);
    lines.push(`    parts since start: ${t.parts.submitted} submitted, ${t.parts.accepted} accepted, ${t.parts.throttled} throttled, ${t.parts.rejected} rejected, ${t.parts.failed} failed${t.lastError === null ? '' : `; last error: ${t.lastError}`}`);
    for (const link of t.links) {
      const modem = link.modem === undefined ? '' : `; ${link.modem.operator ?? 'no operator'}, ${link.modem.signalDbm ?? '?'} dBm, ${link.modem.registration}${link.modem.lastCmsError === null ? '' : `, last ${link.modem.lastCmsError}`}`;
      lines.push(`    ${link.name}: ${link.state}${link.since === null ? '' : ` since ${link.since}`}; window ${link.windowUsed}/${link.windowSize}${link.lastError === null ? '' : `; last error: ${link.lastError}`}${modem}`);
    }
  }
  const routes = facts.routes ?? null;
  if (routes !== null) {
    lines.push('', 'routes (prefix: transports -> where parts go now):');
    for (const r of routes) {
      const transports = r.transports.map((t) => `${t.name}${t.up ? '' : ' (down)'}`).join(', ');
      lines.push(`  ${r.route === '' ? '(every number)' : r.route}: ${r.strategy} ${transports} -> ${r.current ?? 'none up: parts wait'}`);
    }
  }
  lines.push('', 'queues (parts waiting in the store / claimed by the engine):');
  if (facts.queues.length === 0) lines.push('  empty');
  for (const q of facts.queues) lines.push(`  ${q.transport}: ${q.queued} / ${q.submitting}`);
  lines.push('', 'campaigns (in progress, then recently finished):');
  if (facts.campaigns.length === 0) lines.push('  none');
  for (const c of facts.campaigns) {
    lines.push(`  ${c.id} ${JSON.stringify(c.name)} (client ${c.client}, ${c.state}${c.finished ? ', finished' : ''}): ${c.sent}/${c.total} sent; ${formatOutcomes(c.outcomes)}`);
  }
  lines.push('', `webhooks: ${facts.webhooks.deadLetters} dead letter${facts.webhooks.deadLetters === 1 ? '' : 's'}`);
  for (const w of facts.webhooks.clients) {
    const breaker = w.breaker === null ? '' : `; breaker ${w.breaker}`;
    lines.push(`  ${w.client}: ${w.pending} pending, ${w.dead} dead${breaker}${w.lastError === null ? '' : `; last error ${w.lastError} at ${w.lastErrorAt}`}`);
  }
  const { clients, lowThreshold } = facts.credits;
  lines.push('', `credits (balance / reserved / available; send rate)${lowThreshold === null ? '' : `, low below ${lowThreshold}`}:`);
  if (clients.length === 0) lines.push('  no clients');
  for (const c of clients) {
    const figures = c.unlimited ? 'unlimited' : `${c.balance} / ${c.reserved} / ${c.available}`;
    lines.push(`  ${c.client}: ${figures}; ${clientRateText(c)}${c.low ? ' LOW' : ''}`);
  }
  // Older serves answer without it: `?? null` keeps their facts printable.
  const smppServer = facts.smppServer ?? null;
  if (smppServer !== null) {
    lines.push('', 'smpp server sessions (account, bind, address, node; window in use; submit rate):');
    if (smppServer.sessions.length === 0) lines.push('  none bound');
    for (const s of smppServer.sessions) {
      const rate = smppRateText(s);
      lines.push(`  ${s.systemId} ${s.bindType} from ${s.address} on ${s.nodeId} since ${s.boundAt}; window ${smppWindowText(s)}${rate === '' ? '' : `; ${rate}`}`);
    }
    lines.push('', 'smpp server deliveries waiting (receipts and inbound messages, by account):');
    if (smppServer.deliveriesWaiting.length === 0) lines.push('  no smpp accounts');
    for (const d of smppServer.deliveriesWaiting) lines.push(`  ${d.systemId}: ${d.waiting}`);
  }
  lines.push('', 'recent errors:');
  if (facts.recentErrors === null) lines.push('  unknown (serve not answering)');
  else if (facts.recentErrors.length === 0) lines.push('  none');
  for (const e of facts.recentErrors ?? []) {
    const context = Object.entries(e.context).map(([k, v]) => `${k}=${v}`).join(' ');
    lines.push(`  ${new Date(e.atMs).toISOString()} ${e.level} ${e.message}${context === '' ? '' : ` (${context})`}`);
  }
  return lines;
}

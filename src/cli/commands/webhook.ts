/**
 * `smsgate webhook list --failed [--client NAME]` shows dead letters (events that exhausted their
 * retries or were refused with a non-retryable status); `smsgate webhook list` alone shows counts by
 * state. `smsgate webhook replay --client NAME [--since TIME] [--now]` puts the client's dead letters
 * back in the queue (same bytes, attempts reset, due now). A running server sends them at its next
 * poll; when none answers on the configured API address the command says so, and with --now it sends
 * them itself with the full retry policy and reports the outcome, with progress on a terminal.
 */
import type { SmsGateConfig } from '../../gateway/config.js';
import { createLogger } from '../../common/log.js';
import { GatewayError } from '../../common/errors.js';
import type { Store } from '../../store/sqlite/database.js';
import { sealedSecretOf, secretBoxForDatabase } from '../../store/secret-box.js';
import type { StorePorts } from '../../store/store-ports.js';
import type { DeadLetterRow } from '../../store/sqlite/webhook-store.js';
import { parseSinceTime, WebhookSender } from '../../webhooks/index.js';
import { withPorts, type StoreSession } from '../admin-session.js';
import { parseArgs, rejectExtraArguments, requireValue, unknownWordError, UsageError, withUsage, type ParsedArgs } from '../args.js';
import { ttyProgress } from '../tty-progress.js';

const LIST_USAGE = 'smsgate webhook list [--failed] [--client NAME] [--config FILE] [--json]';
const REPLAY_USAGE = 'smsgate webhook replay --client NAME [--since TIME] [--now] [--config FILE] [--json]';
const USAGE = `${LIST_USAGE} | ${REPLAY_USAGE}`;
const HEALTH_TIMEOUT_MS = 1_000;

export async function run(args: string[]): Promise<number> {
  return withUsage(async () => {
    const [subcommand, ...rest] = args;
    if (subcommand === 'list') return list(parseArgs(rest, { values: ['client', 'config'], booleans: ['failed', 'json'] }, LIST_USAGE));
    if (subcommand === 'replay') return replay(parseArgs(rest, { values: ['client', 'since', 'config'], booleans: ['now', 'json'] }, REPLAY_USAGE));
    throw unknownWordError('subcommand', subcommand, USAGE);
  });
}

async function clientIdByName(ports: StorePorts, name: string): Promise<number | null> {
  return (await ports.auth.clientByName(name))?.id ?? null;
}

function iso(ms: number | null): string | null {
  return ms === null ? null : new Date(ms).toISOString();
}

function deadLetterJson(row: DeadLetterRow) {
  return {
    id: row.id, eventId: row.eventId, client: row.clientName, clientId: row.clientId, recipientId: row.recipientId,
    createdAt: iso(row.createdAt), deadAt: iso(row.deadAt), attempts: row.attempts, lastError: row.lastError, reason: row.deadReason, body: row.body,
  };
}

async function list(parsed: ParsedArgs): Promise<number> {
  rejectExtraArguments(parsed.positionals, LIST_USAGE);
  const json = parsed.booleans.has('json');
  const clientName = parsed.values.get('client');
  if (clientName !== undefined && !parsed.booleans.has('failed')) throw new UsageError('--client goes with --failed', LIST_USAGE);
  return withPorts(parsed.values.get('config'), { migrate: true }, async ({ ports }) => {
    if (!parsed.booleans.has('failed')) {
      const counts = await ports.webhooks.countOutboxByState();
      process.stdout.write(json ? `${JSON.stringify(counts)}\n` : `pending ${counts.pending}\ndelivered ${counts.delivered}\ndead ${counts.dead}\n`);
      return 0;
    }
    let clientId: number | undefined;
    if (clientName !== undefined) {
      const id = await clientIdByName(ports, clientName);
      if (id === null) {
        process.stderr.write(`smsgate: no client named '${clientName}'\n`);
        return 1;
      }
      clientId = id;
    }
    const rows = await ports.webhooks.listDeadLetters(clientId === undefined ? {} : { clientId });
    if (json) {
      process.stdout.write(`${JSON.stringify(rows.map(deadLetterJson))}\n`);
    } else if (rows.length === 0) {
      process.stdout.write('no dead letters\n');
    } else {
      process.stdout.write('id\tclient\tcreated\tattempts\tlast_error\tbody\n');
      for (const r of rows) {
        process.stdout.write(`${r.id}\t${r.clientName}\t${iso(r.createdAt) ?? ''}\t${r.attempts}\t${r.lastError ?? ''}\t${r.body}\n`);
      }
    }
    return 0;
  });
}

/** True when a server answers 200 on the configured API address's /health. */
async function serverAnswers(config: SmsGateConfig): Promise<boolean> {
  const host = config.api.host.includes(':') ? `[${config.api.host}]` : config.api.host;
  try {
    const res = await fetch(`http://${host}:${config.api.port}/health`, { signal: AbortSignal.timeout(HEALTH_TIMEOUT_MS) });
    await res.arrayBuffer();
    return res.status === 200;
  } catch {
    return false;
  }
}

async function replay(parsed: ParsedArgs): Promise<number> {
  rejectExtraArguments(parsed.positionals, REPLAY_USAGE);
  const json = parsed.booleans.has('json');
  const clientName = requireValue(parsed, 'client', REPLAY_USAGE);
  const nowMs = Date.now();
  let sinceMs: number | undefined;
  const sinceText = parsed.values.get('since');
  if (sinceText !== undefined) {
    const since = parseSinceTime(sinceText, nowMs);
    if (!since.ok) throw new UsageError(since.reason, REPLAY_USAGE);
    sinceMs = since.sinceMs;
  }
  return withPorts(parsed.values.get('config'), { migrate: true }, async (session) => {
    const { config, ports } = session;
    // --now runs the sender in this process, on the SQLite store; on PostgreSQL the running nodes
    // send what was re-queued. Refused before anything is re-queued, so the command changes nothing.
    const sendHere = parsed.booleans.has('now') ? session.store : undefined;
    if (parsed.booleans.has('now') && sendHere === undefined) {
      throw new GatewayError('BACKEND_UNSUPPORTED', 'webhook replay --now sends from this process, which needs the SQLite database (database.path); on PostgreSQL run it without --now: the running nodes send the re-queued events');
    }
    const clientId = await clientIdByName(ports, clientName);
    if (clientId === null) {
      process.stderr.write(`smsgate: no client named '${clientName}'\n`);
      return 1;
    }
    const ids = await ports.webhooks.requeueDeadLetters(sinceMs === undefined ? { clientId } : { clientId, sinceMs }, nowMs);
    const running = ids.length > 0 && (await serverAnswers(config));
    const result: Record<string, unknown> = { client: clientName, requeued: ids.length, serverRunning: running };
    const lines = [`re-queued ${ids.length} dead letter${ids.length === 1 ? '' : 's'} of client '${clientName}'`];
    if (ids.length > 0 && running) {
      lines.push(`the server answering at ${config.api.host}:${config.api.port} sends them at its next poll`);
    } else if (ids.length > 0 && sendHere !== undefined) {
      const outcome = await sendNow(session, sendHere, ids);
      Object.assign(result, outcome);
      lines.push(`sent from this command: ${outcome.delivered} delivered, ${outcome.dead} dead again, ${outcome.pending} still pending`);
    } else if (ids.length > 0) {
      lines.push(`no smsgate server answered at ${config.api.host}:${config.api.port}: they are sent when \`smsgate serve\` starts (or run again with --now to send them from this command)`);
    }
    process.stdout.write(json ? `${JSON.stringify(result)}\n` : `${lines.join('\n')}\n`);
    return 0;
  });
}

/** Sends the re-queued rows from this process, retries included, until each is delivered or dead. */
async function sendNow(session: StoreSession, store: Store, ids: readonly number[]): Promise<{ delivered: number; dead: number; pending: number }> {
  const { config, ports } = session;
  const logger = createLogger({ level: config.logging.level, destination: process.stderr });
  // Redrive off: this command sends the events it re-queued and stops; redrive is the server's job.
  const sender = new WebhookSender({
    store, secretBox: secretBoxForDatabase(config.database.keyFile, await sealedSecretOf(ports.auth), config.database.path), logger, config: { ...config.webhooks, redriveWithinMs: 0 },
  });
  const count = async () => {
    const tally = { delivered: 0, dead: 0, pending: 0 };
    for (const state of await ports.webhooks.outboxStatesOf(ids)) tally[state] += 1;
    return tally;
  };
  // The longest an event can take: every attempt timing out plus every retry delay, with a margin.
  const boundMs = (config.webhooks.retryDelaysMs.length + 1) * config.webhooks.timeoutMs
    + config.webhooks.retryDelaysMs.reduce((sum, d) => sum + d, 0) + 5_000;
  const deadline = Date.now() + boundMs;
  const progress = ttyProgress(process.stderr);
  let shown = '';
  const show = (tally: { delivered: number; dead: number; pending: number }) => {
    const line = `replay: ${ids.length - tally.pending}/${ids.length} sent (${tally.delivered} delivered, ${tally.dead} dead)`;
    if (line !== shown) progress?.show(line);
    shown = line;
  };
  sender.start();
  try {
    for (let tally = await count(); tally.pending > 0 && Date.now() < deadline; tally = await count()) {
      show(tally);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  } finally {
    await sender.stop();
  }
  const final = await count();
  show(final);
  progress?.end();
  return final;
}

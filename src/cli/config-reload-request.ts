/**
 * How `smsgate config reload` reaches the running serve (docs/behaviour/reload.md): first its
 * admin listener (POST /reload, with admin.token when set), which re-reads the file itself and
 * answers what it applied or why it refused; when the config has no admin section or nothing
 * answers there, on SQLite the serve holding the database's lock (its pid, on this host) gets
 * SIGHUP, after the file was validated here (the serve's answer then is only in its log).
 */
import { hostname } from 'node:os';
import type { AdminConfig } from '../admin/admin-config.js';
import type { ReloadOutcome } from '../config/reload-outcome.js';
import { GatewayError } from '../common/errors.js';
import { databaseTarget } from '../config/database.js';
import type { DatabaseConfig } from '../config/types.js';
import { currentServeLockHolder } from '../store/sqlite/serve-lock.js';
import { adminUrl } from './commands/status.js';

const REQUEST_TIMEOUT_MS = 60_000;

export type ReloadAnswer =
  /** The admin listener answered with the serve's outcome. */
  | { via: 'admin'; url: string; outcome: ReloadOutcome }
  /** SIGHUP went to this pid; the serve logs the outcome. */
  | { via: 'signal'; pid: number };

/** The admin listener's answer, or why none came (the caller then tries the pid). */
export async function askAdminListener(admin: AdminConfig): Promise<{ ok: true; answer: ReloadAnswer } | { ok: false; why: string }> {
  const url = `${adminUrl(admin)}/reload`;
  let response: Response;
  try {
    response = await fetch(url, {
      method: 'POST',
      headers: admin.token === undefined ? {} : { authorization: `Bearer ${admin.token}` },
      // A removed transport drains its in-flight submits (engine.drainTimeoutMs) before the answer.
      signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
    });
  } catch (err) {
    const cause = (err as { cause?: { code?: string } }).cause?.code ?? (err instanceof Error ? err.name : String(err));
    return { ok: false, why: `${url}: ${cause}` };
  }
  if (response.status === 200 || response.status === 422) {
    return { ok: true, answer: { via: 'admin', url, outcome: (await response.json()) as ReloadOutcome } };
  }
  const text = await response.text();
  const detail = /"detail":"([^"]*)"/.exec(text)?.[1];
  const why = `${url} answered ${response.status}${response.status === 401 ? ': admin.token does not match the running serve' : detail === undefined ? '' : `: ${detail}`}`;
  // An answer that is not a reload's (401, 403, 404 of an older serve) is final: signalling the pid
  // behind the listener's back would get round the listener's own rule.
  throw new GatewayError('SERVE_NOT_REACHED', why);
}

/** SIGHUP to the serve holding the SQLite database's lock on this host; SERVE_NOT_REACHED when there is none. */
export function signalServe(database: DatabaseConfig, whyNotAdmin: string): ReloadAnswer {
  const target = databaseTarget(database);
  if (target.kind === 'postgres') {
    throw new GatewayError('SERVE_NOT_REACHED', `no admin listener answered (${whyNotAdmin}), and a node on PostgreSQL has no lock to find its pid by: add an "admin" section, or run systemctl reload smsgate (kill -HUP <pid>) on the node`);
  }
  const holder = currentServeLockHolder(target.path);
  if (holder === undefined) {
    throw new GatewayError('SERVE_NOT_REACHED', `no smsgate serve is running on ${target.path} (${whyNotAdmin}; no process holds its serve lock)`);
  }
  if (holder.host !== hostname()) {
    throw new GatewayError('SERVE_NOT_REACHED', `the serve on ${target.path} runs on host ${holder.host} (pid ${holder.pid}): reload it there`);
  }
  try {
    process.kill(holder.pid, 'SIGHUP');
  } catch (err) {
    throw new GatewayError('SERVE_NOT_REACHED', `cannot signal smsgate serve (pid ${holder.pid}): ${(err as NodeJS.ErrnoException).code ?? String(err)}`, { cause: err });
  }
  return { via: 'signal', pid: holder.pid };
}

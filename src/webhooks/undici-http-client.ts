/**
 * The webhook POST over undici: the same contract as createNodeHttpClient
 * (http-client.ts): keep-alive connections, at most maxSockets per origin, redirects not followed
 * (undici's request never follows them), a deadline of timeoutMs until the response status line,
 * never rejects, failures coded (INVALID_URL, TIMEOUT, the socket's errno such as ECONNREFUSED or
 * ECONNRESET). Measured against node:http on this machine (README "Packages"): about a fifth less
 * client CPU a request at 64 concurrent keep-alive connections, which is the sender thread's largest cost.
 *
 * A request is one writev (head and body corked together) and its answer one read: with one request
 * a connection at a time that is the floor, two syscalls a webhook. `pipelining` above 1 sends up to
 * that many requests on a connection before the first answer (RFC 9112 §9.3.2) over
 * ceil(maxSockets / pipelining) connections, and writes the requests one turn puts on a connection
 * in one writev; the receiver's answers then arrive several to a read. Measured with bench:e2e
 * (20,000 webhooks to a local receiver, 64 in flight): 20,000 writes and 20,000 reads at 1, 3,513
 * and 3,238 at 8, with a lower receipt-to-webhook lag. It is not the default: answers come back in
 * request order and many servers (nginx, Go's net/http) take a connection's requests one at a time,
 * so a slow receiver would serve the webhooks in flight over maxSockets / pipelining connections
 * instead of maxSockets; and undici starts a request's deadline when the answers ahead of it are in.
 */
import type { Socket } from 'node:net';
import { Agent, buildConnector, type Dispatcher } from 'undici';
import type { WebhookHttpClient, WebhookResponse } from './http-client.js';

/** What a webhook URL resolves to, parsed once per URL (a campaign sends thousands of events to one). */
type Target =
  | { kind: 'ok'; origin: string; path: string; authorization: string | undefined }
  | { kind: 'invalid'; message: string };

/** An answer's body is read and dropped up to this size; a larger one closes its connection instead. */
const BODY_DISCARD_LIMIT_BYTES = 128 * 1024;

/** Distinct webhook URLs remembered; past this the table starts again (a URL costs one parse to re-add). */
const TARGET_CACHE_LIMIT = 1024;

function parseTarget(url: string): Target {
  let target: URL;
  try {
    target = new URL(url);
  } catch {
    return { kind: 'invalid', message: 'webhook URL does not parse' };
  }
  if (target.protocol !== 'https:' && target.protocol !== 'http:') return { kind: 'invalid', message: `unsupported scheme ${target.protocol}` };
  // Credentials in the URL are sent as Basic (RFC 7617), percent-decoded, as node:http does.
  const authorization = target.username !== '' || target.password !== ''
    ? `Basic ${Buffer.from(`${decodeURIComponent(target.username)}:${decodeURIComponent(target.password)}`).toString('base64')}`
    : undefined;
  return { kind: 'ok', origin: target.origin, path: `${target.pathname}${target.search}`, authorization };
}

/** undici wraps a socket failure; the errno underneath (ECONNRESET, EPIPE...) is the code the outbox keeps. */
function errorCode(err: unknown): string {
  const e = err as { code?: unknown; cause?: { code?: unknown } } | null;
  const cause = e?.cause?.code;
  if (typeof cause === 'string' && cause !== '') return cause;
  const code = e?.code;
  if (code === 'UND_ERR_SOCKET' || code === 'UND_ERR_CLOSED') return 'ECONNRESET';
  return typeof code === 'string' && code !== '' ? code : 'NETWORK_ERROR';
}

/** undici's codes for a deadline that passed: connecting, waiting for the status line, reading the body. */
const TIMEOUT_CODES: ReadonlySet<string> = new Set(['UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT']);

export interface UndiciHttpClientOptions {
  /** Requests in flight at once to one origin; with pipelining 1 also its connections. */
  maxSockets: number;
  /** Connecting, then the status line of the request at the head of its connection. */
  timeoutMs: number;
  /** Requests sent on one connection before its first answer (default 1: no pipelining). */
  pipelining?: number;
}

export function createUndiciHttpClient(options: UndiciHttpClientOptions): WebhookHttpClient {
  const pipelining = Math.max(1, Math.floor(options.pipelining ?? 1));
  const connect = buildConnector({ timeout: options.timeoutMs });
  const agent = new Agent({
    connections: Math.ceil(options.maxSockets / pipelining),
    pipelining,
    connect: pipelining === 1 ? connect : corkedPerTurn(connect),
  });
  // SPEC "Events" point 8: the same event may be delivered more than once and receivers are
  // idempotent, so undici may pipeline the POSTs (it pipelines only idempotent requests) and send
  // again, on a new connection, the requests a lost connection left unanswered.
  const pipelined = pipelining > 1;
  const targets = new Map<string, Target>();
  const targetOf = (url: string): Target => {
    let target = targets.get(url);
    if (target === undefined) {
      target = parseTarget(url);
      if (targets.size >= TARGET_CACHE_LIMIT) targets.clear();
      targets.set(url, target);
    }
    return target;
  };
  return {
    async post({ url, headers, body, timeoutMs }): Promise<WebhookResponse> {
      const target = targetOf(url);
      if (target.kind === 'invalid') return { kind: 'network-error', code: 'INVALID_URL', message: target.message };
      const headerList: string[] = [];
      if (target.authorization !== undefined) headerList.push('Authorization', target.authorization);
      for (const name of Object.keys(headers)) headerList.push(name, headers[name] as string);
      try {
        // undici's own deadlines (no AbortController and timer per request: measurably cheaper):
        // connecting within timeoutMs (the agent's connect timeout), then the status line within
        // timeoutMs of the request being sent.
        const response: Dispatcher.ResponseData = await agent.request({
          origin: target.origin,
          path: target.path,
          method: 'POST',
          headers: headerList,
          body,
          idempotent: pipelined,
          // undici holds a "blocking" request's connection until it is answered (its default for a POST).
          blocking: !pipelined,
          headersTimeout: timeoutMs,
          bodyTimeout: timeoutMs,
        });
        // The status decides; the body is read and dropped before answering, so the next request
        // finds the connection free. A body that does not end in time only costs its connection.
        try {
          await response.body.dump({ limit: BODY_DISCARD_LIMIT_BYTES });
        } catch {
          // Status known; undici drops the connection.
        }
        return { kind: 'response', statusCode: response.statusCode };
      } catch (err) {
        const code = errorCode(err);
        if (TIMEOUT_CODES.has(code)) return { kind: 'network-error', code: 'TIMEOUT', message: `no response within ${timeoutMs} ms` };
        return { kind: 'network-error', code, message: err instanceof Error ? err.message : String(err) };
      }
    },
    close() {
      void agent.destroy().catch(() => {});
    },
  };
}

/**
 * The connections of a pipelining agent: the first write of a turn corks the socket until the
 * turn's end, so the requests undici writes on it in that turn (each its own head and body) leave
 * in one writev.
 */
function corkedPerTurn(connect: buildConnector.connector): buildConnector.connector {
  return (opts, callback) => connect(opts, (...result: Parameters<buildConnector.Callback>) => {
    if (result[0] === null) corkEachTurn(result[1]);
    callback(...result);
  });
}

function corkEachTurn(socket: Socket): void {
  let corked = false;
  const uncork = (): void => {
    corked = false;
    socket.uncork();
  };
  const write = socket.write;
  socket.write = function corkingWrite(this: Socket, ...args: Parameters<Socket['write']>): boolean {
    if (!corked) {
      corked = true;
      socket.cork();
      process.nextTick(uncork);
    }
    return write.apply(this, args);
  } as Socket['write'];
}

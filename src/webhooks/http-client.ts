/**
 * The one HTTP POST a webhook attempt makes, over node:http/https with keep-alive sockets.
 * Redirects are not followed (node:http never follows them): a 3xx is returned as it came.
 * Every request has a deadline: timeoutMs until the response status line, then the socket is destroyed.
 */
import { Agent as HttpAgent, request as httpRequest, type IncomingMessage, type RequestOptions } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';

export interface WebhookRequest {
  url: string;
  headers: Record<string, string>;
  /** Sent as UTF-8, byte for byte the text that was signed. */
  body: string;
  timeoutMs: number;
}

/** A response was received (any status), or the request failed with a coded network error. */
export type WebhookResponse =
  | { kind: 'response'; statusCode: number }
  | { kind: 'network-error'; code: string; message: string };

/** Contract: never rejects; a failure of any kind is a `network-error` with a stable code. */
export interface WebhookHttpClient {
  post(request: WebhookRequest): Promise<WebhookResponse>;
  /** Closes idle keep-alive sockets. */
  close(): void;
}

/** Bounded read of an error response body is not needed: the status decides, so bodies are discarded. */
function discard(res: IncomingMessage): void {
  res.resume();
}

/** What a webhook URL resolves to, parsed once per URL (a campaign sends thousands of events to one). */
type Target =
  | { kind: 'ok'; secure: boolean; options: RequestOptions; fixedHeaders: readonly string[] }
  | { kind: 'invalid'; message: string };

/** Distinct webhook URLs remembered; past this the table starts again (a URL costs one parse to re-add). */
const TARGET_CACHE_LIMIT = 1024;

function parseTarget(url: string, agents: { http: HttpAgent; https: HttpsAgent }): Target {
  let target: URL;
  try {
    target = new URL(url);
  } catch {
    return { kind: 'invalid', message: 'webhook URL does not parse' };
  }
  const secure = target.protocol === 'https:';
  if (!secure && target.protocol !== 'http:') return { kind: 'invalid', message: `unsupported scheme ${target.protocol}` };
  // The fields node:http's urlToHttpOptions would take from the URL (brackets off an IPv6 host).
  const hostname = target.hostname.startsWith('[') ? target.hostname.slice(1, -1) : target.hostname;
  const options: RequestOptions = {
    protocol: target.protocol,
    hostname,
    path: `${target.pathname}${target.search}`,
    method: 'POST',
    agent: secure ? agents.https : agents.http,
    ...(target.port === '' ? {} : { port: Number(target.port) }),
  };
  // node:http adds Host and (for user:password@ in the URL) Authorization itself only when headers
  // come as an object, so with a header list they are written here, as it would write them:
  // URL.host is "hostname[:port]" without the scheme's default port (RFC 9110 §7.2), and the
  // credentials are percent-decoded and sent as Basic (RFC 7617), as urlToHttpOptions' auth is.
  const fixedHeaders = ['Host', target.host];
  if (target.username !== '' || target.password !== '') {
    const credentials = `${decodeURIComponent(target.username)}:${decodeURIComponent(target.password)}`;
    fixedHeaders.push('Authorization', `Basic ${Buffer.from(credentials).toString('base64')}`);
  }
  return { kind: 'ok', secure, options, fixedHeaders };
}

export function createNodeHttpClient(options: { maxSockets: number }): WebhookHttpClient {
  const agentOptions = { keepAlive: true, maxSockets: options.maxSockets, maxFreeSockets: options.maxSockets };
  const agents = { http: new HttpAgent(agentOptions), https: new HttpsAgent(agentOptions) };
  const targets = new Map<string, Target>();
  const targetOf = (url: string): Target => {
    let target = targets.get(url);
    if (target === undefined) {
      target = parseTarget(url, agents);
      if (targets.size >= TARGET_CACHE_LIMIT) targets.clear();
      targets.set(url, target);
    }
    return target;
  };
  return {
    post({ url, headers, body, timeoutMs }) {
      return new Promise<WebhookResponse>((resolve) => {
        const target = targetOf(url);
        if (target.kind === 'invalid') {
          resolve({ kind: 'network-error', code: 'INVALID_URL', message: target.message });
          return;
        }
        let settled = false;
        const settle = (result: WebhookResponse) => {
          if (settled) return;
          settled = true;
          clearTimeout(timer);
          resolve(result);
        };
        // Headers as a flat [name, value, ...] list: node:http writes them as given instead of
        // validating and storing each one through setHeader (measurably cheaper per request).
        const headerList: string[] = [...target.fixedHeaders];
        for (const name of Object.keys(headers)) headerList.push(name, headers[name] as string);
        headerList.push('Content-Length', String(Buffer.byteLength(body, 'utf8')));
        const send = target.secure ? httpsRequest : httpRequest;
        const req = send({ ...target.options, headers: headerList }, (res) => {
          discard(res);
          settle({ kind: 'response', statusCode: res.statusCode ?? 0 });
        });
        const timer = setTimeout(() => {
          settle({ kind: 'network-error', code: 'TIMEOUT', message: `no response within ${timeoutMs} ms` });
          req.destroy();
        }, timeoutMs);
        req.on('error', (err: NodeJS.ErrnoException) => {
          settle({ kind: 'network-error', code: err.code ?? 'NETWORK_ERROR', message: err.message });
        });
        // A string body lets node:http send the header block and the body in one write.
        req.end(body, 'utf8');
      });
    },
    close() {
      agents.http.destroy();
      agents.https.destroy();
    },
  };
}

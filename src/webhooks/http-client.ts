/**
 * The one HTTP POST a webhook attempt makes, over node:http/https with keep-alive sockets.
 * Redirects are not followed (node:http never follows them): a 3xx is returned as it came.
 * Every request has a deadline: timeoutMs until the response status line, then the socket is destroyed.
 */
import { Agent as HttpAgent, request as httpRequest, type IncomingMessage } from 'node:http';
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

export function createNodeHttpClient(options: { maxSockets: number }): WebhookHttpClient {
  const agentOptions = { keepAlive: true, maxSockets: options.maxSockets, maxFreeSockets: options.maxSockets };
  const httpAgent = new HttpAgent(agentOptions);
  const httpsAgent = new HttpsAgent(agentOptions);
  return {
    post({ url, headers, body, timeoutMs }) {
      return new Promise<WebhookResponse>((resolve) => {
        let target: URL;
        try {
          target = new URL(url);
        } catch {
          resolve({ kind: 'network-error', code: 'INVALID_URL', message: 'webhook URL does not parse' });
          return;
        }
        const secure = target.protocol === 'https:';
        if (!secure && target.protocol !== 'http:') {
          resolve({ kind: 'network-error', code: 'INVALID_URL', message: `unsupported scheme ${target.protocol}` });
          return;
        }
        let settled = false;
        const settle = (result: WebhookResponse) => {
          if (settled) return;
          settled = true;
          clearTimeout(timer);
          resolve(result);
        };
        const send = secure ? httpsRequest : httpRequest;
        const req = send(target, {
          method: 'POST',
          agent: secure ? httpsAgent : httpAgent,
          headers: { ...headers, 'Content-Length': String(Buffer.byteLength(body, 'utf8')) },
        }, (res) => {
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
      httpAgent.destroy();
      httpsAgent.destroy();
    },
  };
}

/**
 * A real webhook receiver on 127.0.0.1 for tests and benches: verifies X-Signature the way the spec
 * tells receivers to (HMAC-SHA256 over the raw bytes, constant-time compare; a mismatch gets 401 and
 * is recorded), answers each request as scripted (status codes, delays, never answering, resetting
 * the connection), and records every request with its arrival time, headers and raw body.
 */
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';
import { verifySignature } from '../../src/webhooks/signature.js';

export type ScriptedResponse =
  /** Answer with this status, after delayMs if given. */
  | { kind: 'status'; statusCode: number; delayMs?: number }
  /** Never answer: the sender's timeout has to fire. The socket is closed when the receiver closes. */
  | { kind: 'hang' }
  /** Destroy the socket without a response (the sender sees ECONNRESET or "socket hang up"). */
  | { kind: 'reset' };

export interface ReceivedWebhook {
  /** 0-based arrival order. */
  seq: number;
  /** Wall clock at arrival of the whole body, ms since epoch. */
  receivedAtMs: number;
  /** Monotonic clock at the same moment (performance.now()), for measuring gaps between attempts. */
  monotonicMs: number;
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  /** Empty when the receiver was started with keepBodies false. */
  rawBody: Buffer;
  signature: string | undefined;
  /** null when the receiver has no secret (nothing to verify). */
  signatureOk: boolean | null;
  response: ScriptedResponse;
}

export interface WebhookReceiverOptions {
  /** The shared secret; when set, an absent or wrong X-Signature is answered 401. */
  secret?: string | null;
  /** Keep raw bodies (default true). Benches sending 100k events turn it off to save memory. */
  keepBodies?: boolean;
  /** Keep a record per request (default true). When false only the counters are kept. */
  keepRequests?: boolean;
  /** The answer when no script entry or responder applies; default 200. */
  defaultResponse?: ScriptedResponse;
  /** Listen on this port (default: any free one), e.g. to come back where a closed receiver was. */
  port?: number;
}

type Responder = (request: Omit<ReceivedWebhook, 'response'>) => ScriptedResponse | undefined;

export class WebhookReceiver {
  readonly requests: ReceivedWebhook[] = [];
  /** Every request, including those not kept. */
  count = 0;
  signatureFailures = 0;
  /** Requests answered 2xx, including those not kept. */
  acknowledged = 0;
  /** TCP connections accepted (a sender on kept-alive connections opens few). */
  connections = 0;
  private readonly scripted: ScriptedResponse[] = [];
  private responder: Responder | undefined;
  private readonly waiters = new Set<() => void>();

  private constructor(
    private readonly server: Server,
    readonly port: number,
    readonly url: string,
    private readonly options: Required<Omit<WebhookReceiverOptions, 'secret' | 'port'>> & { secret: string | null },
  ) {}

  static async start(options: WebhookReceiverOptions = {}): Promise<WebhookReceiver> {
    const resolved = {
      secret: options.secret ?? null,
      keepBodies: options.keepBodies ?? true,
      keepRequests: options.keepRequests ?? true,
      defaultResponse: options.defaultResponse ?? { kind: 'status', statusCode: 200 },
    } as const;
    let receiver: WebhookReceiver | undefined;
    const server = createServer((req, res) => receiver?.handle(req, res));
    server.keepAliveTimeout = 30_000;
    server.on('connection', () => {
      if (receiver !== undefined) receiver.connections += 1;
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(options.port ?? 0, '127.0.0.1', () => resolve());
    });
    const { port } = server.address() as AddressInfo;
    receiver = new WebhookReceiver(server, port, `http://127.0.0.1:${port}/webhook`, resolved);
    return receiver;
  }

  /** The next requests (with a valid signature) get these answers, in arrival order. */
  script(...responses: ScriptedResponse[]): this {
    this.scripted.push(...responses);
    return this;
  }

  /** Decides answers by request (after the script is used up); undefined falls back to the default. */
  respondWith(responder: Responder | undefined): this {
    this.responder = responder;
    return this;
  }

  /** Resolves once `count` requests have arrived in total; rejects after timeoutMs. */
  waitForCount(count: number, timeoutMs = 10_000): Promise<void> {
    return this.waitUntil(() => this.count >= count, timeoutMs, `${count} webhook requests (got ${this.count})`);
  }

  waitUntil(predicate: () => boolean, timeoutMs = 10_000, what = 'condition'): Promise<void> {
    if (predicate()) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const check = () => {
        if (!predicate()) return;
        clearTimeout(timer);
        this.waiters.delete(check);
        resolve();
      };
      const timer = setTimeout(() => {
        this.waiters.delete(check);
        reject(new Error(`webhook receiver: timed out after ${timeoutMs} ms waiting for ${what}`));
      }, timeoutMs);
      this.waiters.add(check);
    });
  }

  /** Parsed JSON bodies of the kept requests whose signature was not rejected. */
  bodies(): unknown[] {
    return this.requests.filter((r) => r.signatureOk !== false).map((r) => JSON.parse(r.rawBody.toString('utf8')) as unknown);
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private handle(req: IncomingMessage, res: ServerResponse): void {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const rawBody = Buffer.concat(chunks);
      const header = req.headers['x-signature'];
      const signature = Array.isArray(header) ? header[0] : header;
      const signatureOk = this.options.secret === null ? null : verifySignature(rawBody, signature, this.options.secret);
      const seen = {
        seq: this.count,
        receivedAtMs: Date.now(),
        monotonicMs: performance.now(),
        method: req.method ?? '',
        path: req.url ?? '',
        headers: req.headers,
        rawBody: this.options.keepBodies ? rawBody : Buffer.alloc(0),
        signature,
        signatureOk,
      };
      let response: ScriptedResponse;
      if (signatureOk === false) {
        this.signatureFailures += 1;
        response = { kind: 'status', statusCode: 401 };
      } else {
        response = this.scripted.shift() ?? this.responder?.(seen) ?? this.options.defaultResponse;
      }
      this.count += 1;
      if (this.options.keepRequests) this.requests.push({ ...seen, response });
      this.answer(req, res, response);
      for (const check of [...this.waiters]) check();
    });
  }

  private answer(req: IncomingMessage, res: ServerResponse, response: ScriptedResponse): void {
    if (response.kind === 'hang') return;
    if (response.kind === 'reset') {
      req.socket.destroy();
      return;
    }
    const send = () => {
      if (response.statusCode >= 200 && response.statusCode <= 299) this.acknowledged += 1;
      res.writeHead(response.statusCode, { 'Content-Type': 'text/plain' }).end(String(response.statusCode));
    };
    if (response.delayMs === undefined || response.delayMs <= 0) send();
    else setTimeout(send, response.delayMs);
  }
}

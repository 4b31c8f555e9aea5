/**
 * createUndiciHttpClient against real sockets on 127.0.0.1: the body byte for byte with its
 * Content-Length in UTF-8 bytes, Basic credentials from the URL, one keep-alive connection for
 * requests in sequence, a 3xx returned as it came (no redirect followed), and coded failures.
 */
import { createServer, type Server, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import type { WebhookHttpClient } from '../../src/webhooks/http-client.js';
import { createUndiciHttpClient } from '../../src/webhooks/undici-http-client.js';

let server: Server | undefined;
let client: WebhookHttpClient | undefined;
const sockets = new Set<Socket>();

afterEach(async () => {
  client?.close();
  for (const socket of sockets) socket.destroy();
  sockets.clear();
  if (server !== undefined) await new Promise<void>((resolve) => server?.close(() => resolve()));
  server = undefined;
  client = undefined;
});

/** A raw server that collects requests (head + Content-Length body) and answers each with `answer`, or never when null. */
async function rawServer(answer: string | null = 'HTTP/1.1 204 No Content\r\n\r\n'): Promise<{ port: number; requests: Buffer[]; connections: () => number }> {
  const requests: Buffer[] = [];
  let connections = 0;
  server = createServer((socket: Socket) => {
    connections += 1;
    sockets.add(socket);
    let pending = Buffer.alloc(0);
    socket.on('data', (chunk: Buffer) => {
      pending = Buffer.concat([pending, chunk]);
      for (;;) {
        const headEnd = pending.indexOf('\r\n\r\n');
        if (headEnd < 0) return;
        const length = Number(/\r\ncontent-length: (\d+)/i.exec(pending.subarray(0, headEnd).toString('latin1'))?.[1] ?? 0);
        if (pending.length < headEnd + 4 + length) return;
        requests.push(pending.subarray(0, headEnd + 4 + length));
        pending = pending.subarray(headEnd + 4 + length);
        if (answer !== null) socket.write(answer);
      }
    });
  });
  await new Promise<void>((resolve) => server?.listen(0, '127.0.0.1', () => resolve()));
  return { port: (server.address() as { port: number }).port, requests, connections: () => connections };
}

describe('createUndiciHttpClient', () => {
  it('sends the given headers, Content-Length in UTF-8 bytes and the exact body, and reuses keep-alive connections', async () => {
    const { port, requests, connections } = await rawServer();
    client = createUndiciHttpClient({ maxSockets: 4, timeoutMs: 5_000 });
    // 16 bytes: é is 2 in UTF-8, € is 3.
    const body = '{"text":"é€"}';
    for (let i = 0; i < 5; i++) {
      expect(await client.post({ url: `http://127.0.0.1:${port}/hook?x=1`, headers: { 'X-Signature': 'sha256=00' }, body, timeoutMs: 5_000 }))
        .toEqual({ kind: 'response', statusCode: 204 });
    }
    expect(requests).toHaveLength(5);
    // undici's pool marks a connection free a tick after the answer, so the second request may
    // open a second one; from then on they are reused (node:http would open one per request without keep-alive).
    expect(connections()).toBeLessThanOrEqual(2);
    const text = requests[0]!.toString('utf8');
    expect(text.startsWith('POST /hook?x=1 HTTP/1.1\r\n')).toBe(true);
    expect(text).toMatch(new RegExp(`\\r\\nhost: 127\\.0\\.0\\.1:${port}\\r\\n`, 'i'));
    expect(text).toMatch(/\r\nX-Signature: sha256=00\r\n/i);
    expect(text).toMatch(/\r\ncontent-length: 16\r\n/i);
    expect(text.endsWith(`\r\n\r\n${body}`)).toBe(true);
  });

  it('sends user:password@ from the URL as Basic credentials, percent-decoded (RFC 7617)', async () => {
    const { port, requests } = await rawServer();
    client = createUndiciHttpClient({ maxSockets: 1, timeoutMs: 5_000 });
    await client.post({ url: `http://hook:p%40ss@127.0.0.1:${port}/`, headers: {}, body: '', timeoutMs: 5_000 });
    expect(requests[0]?.toString('latin1')).toMatch(new RegExp(`\\r\\nAuthorization: Basic ${Buffer.from('hook:p@ss').toString('base64')}\\r\\n`, 'i'));
  });

  it('returns a redirect as it came instead of following it', async () => {
    const { port, requests } = await rawServer('HTTP/1.1 302 Found\r\nLocation: http://127.0.0.1:9/elsewhere\r\nContent-Length: 0\r\n\r\n');
    client = createUndiciHttpClient({ maxSockets: 1, timeoutMs: 5_000 });
    expect(await client.post({ url: `http://127.0.0.1:${port}/`, headers: {}, body: '{}', timeoutMs: 5_000 })).toEqual({ kind: 'response', statusCode: 302 });
    expect(requests).toHaveLength(1);
  });

  it('codes no answer within timeoutMs as TIMEOUT, a refused connection as ECONNREFUSED, an unusable URL as INVALID_URL', async () => {
    const { port } = await rawServer(null);
    client = createUndiciHttpClient({ maxSockets: 1, timeoutMs: 5_000 });
    expect(await client.post({ url: `http://127.0.0.1:${port}/`, headers: {}, body: '', timeoutMs: 100 })).toMatchObject({ kind: 'network-error', code: 'TIMEOUT' });
    const closed = await new Promise<number>((resolve) => {
      const probe = createServer();
      probe.listen(0, '127.0.0.1', () => {
        const free = (probe.address() as { port: number }).port;
        probe.close(() => resolve(free));
      });
    });
    expect(await client.post({ url: `http://127.0.0.1:${closed}/`, headers: {}, body: '', timeoutMs: 5_000 })).toMatchObject({ kind: 'network-error', code: 'ECONNREFUSED' });
    for (const url of ['ftp://127.0.0.1/x', 'not a url']) {
      expect(await client.post({ url, headers: {}, body: '', timeoutMs: 1_000 })).toMatchObject({ kind: 'network-error', code: 'INVALID_URL' });
    }
  });
});

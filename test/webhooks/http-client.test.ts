/**
 * createNodeHttpClient's request bytes, read raw off a real TCP socket on 127.0.0.1: the header
 * block node:http would have written for a URL (Host, Basic credentials from user:password@,
 * Content-Length in UTF-8 bytes, keep-alive) and the body byte for byte; unusable URLs are coded.
 */
import { createServer, type Server, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { createNodeHttpClient, type WebhookHttpClient } from '../../src/webhooks/http-client.js';

let server: Server | undefined;
let client: WebhookHttpClient | undefined;

afterEach(async () => {
  client?.close();
  if (server !== undefined) await new Promise<void>((resolve) => server?.close(() => resolve()));
  server = undefined;
  client = undefined;
});

/** A raw server that collects one request (head + Content-Length body) and answers 204. */
async function rawServer(): Promise<{ port: number; requests: Buffer[] }> {
  const requests: Buffer[] = [];
  server = createServer((socket: Socket) => {
    let pending = Buffer.alloc(0);
    socket.on('data', (chunk: Buffer) => {
      pending = Buffer.concat([pending, chunk]);
      const headEnd = pending.indexOf('\r\n\r\n');
      if (headEnd < 0) return;
      const length = Number(/\r\ncontent-length: (\d+)/i.exec(pending.subarray(0, headEnd).toString('latin1'))?.[1] ?? 0);
      if (pending.length < headEnd + 4 + length) return;
      requests.push(pending.subarray(0, headEnd + 4 + length));
      pending = pending.subarray(headEnd + 4 + length);
      socket.write('HTTP/1.1 204 No Content\r\n\r\n');
    });
  });
  await new Promise<void>((resolve) => server?.listen(0, '127.0.0.1', () => resolve()));
  return { port: (server.address() as { port: number }).port, requests };
}

describe('createNodeHttpClient', () => {
  it('writes Host, the given headers in order, Content-Length in UTF-8 bytes and the exact body', async () => {
    const { port, requests } = await rawServer();
    client = createNodeHttpClient({ maxSockets: 2 });
    // 16 bytes: é is 2 in UTF-8, € is 3.
    const body = '{"text":"é€"}';
    const response = await client.post({
      url: `http://127.0.0.1:${port}/hook?x=1`,
      headers: { 'Content-Type': 'application/json; charset=utf-8', 'X-Signature': 'sha256=00' },
      body,
      timeoutMs: 5_000,
    });
    expect(response).toEqual({ kind: 'response', statusCode: 204 });
    expect(requests.map((r) => r.toString('utf8'))).toEqual([
      `POST /hook?x=1 HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nContent-Type: application/json; charset=utf-8\r\n`
        + `X-Signature: sha256=00\r\nContent-Length: 16\r\nConnection: keep-alive\r\n\r\n${body}`,
    ]);
  });

  it('sends user:password@ from the URL as Basic credentials, percent-decoded (RFC 7617)', async () => {
    const { port, requests } = await rawServer();
    client = createNodeHttpClient({ maxSockets: 2 });
    await client.post({ url: `http://hook:p%40ss@127.0.0.1:${port}/`, headers: {}, body: '', timeoutMs: 5_000 });
    const head = requests[0]?.toString('latin1') ?? '';
    expect(head).toContain(`\r\nAuthorization: Basic ${Buffer.from('hook:p@ss').toString('base64')}\r\n`);
    expect(head.startsWith(`POST / HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n`)).toBe(true);
  });

  it('reuses one keep-alive socket for requests one after another to the same URL', async () => {
    const { port, requests } = await rawServer();
    let connections = 0;
    server?.on('connection', () => { connections += 1; });
    client = createNodeHttpClient({ maxSockets: 4 });
    for (let i = 0; i < 3; i++) {
      expect(await client.post({ url: `http://127.0.0.1:${port}/w`, headers: {}, body: `${i}`, timeoutMs: 5_000 }))
        .toEqual({ kind: 'response', statusCode: 204 });
    }
    expect(requests).toHaveLength(3);
    expect(connections).toBe(1);
  });

  it('codes a URL it cannot use as INVALID_URL without a request', async () => {
    client = createNodeHttpClient({ maxSockets: 1 });
    for (const url of ['ftp://127.0.0.1/x', 'not a url']) {
      expect(await client.post({ url, headers: {}, body: '', timeoutMs: 1_000 })).toMatchObject({ kind: 'network-error', code: 'INVALID_URL' });
    }
  });
});

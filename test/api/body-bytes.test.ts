/**
 * The JSON body reader fed whole and one byte at a time over a raw TCP socket: the same campaign is
 * stored either way, including multi-byte UTF-8 characters split across writes.
 */
import { connect, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_DISCARDED_BODY_BYTES } from '../../src/api/read-json-body.js';
import { readStoredRecipients } from '../../src/campaigns/campaign-request.js';
import { startApiFixture, type ApiFixture } from '../support/api-fixture.js';

let fixture: ApiFixture;
let token: string;

beforeAll(async () => {
  fixture = await startApiFixture({ startProcessor: false, maxBodyBytes: 4_096 });
  ({ token } = await fixture.createAccount());
});
afterAll(async () => {
  await fixture.close();
});

interface RawConnection {
  socket: Socket;
  /** Everything the server has answered so far, as UTF-8. */
  response(): string;
  closed: Promise<void>;
}

/** A raw TCP connection to the API that collects the server's answer. */
async function openRawConnection(): Promise<RawConnection> {
  const { port } = new URL(fixture.baseUrl);
  const socket = connect(Number(port), '127.0.0.1');
  await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
  let response = '';
  socket.on('data', (chunk: Buffer) => {
    response += chunk.toString('utf8');
  });
  const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
  return { socket, response: () => response, closed };
}

/** Sends a raw HTTP/1.1 request, whole or one byte per write, and returns the raw response. */
async function rawRequest(request: Buffer, oneByteAtATime: boolean): Promise<string> {
  const { socket, response, closed } = await openRawConnection();
  socket.setNoDelay(true);
  // After an early answer (413) the server closes while bytes are still being written: EPIPE or
  // ECONNRESET on our side is expected then; the response has already been read.
  socket.on('error', () => undefined);
  if (oneByteAtATime) {
    for (let i = 0; i < request.length; i++) {
      if (socket.destroyed) break;
      socket.write(request.subarray(i, i + 1));
      await new Promise((r) => setImmediate(r));
    }
  } else {
    socket.write(request);
  }
  await closed;
  return response();
}

function campaignRequest(body: Buffer, framing: 'content-length' | 'chunked'): Buffer {
  const head = [
    'POST /v1/campaign HTTP/1.1',
    'Host: 127.0.0.1',
    `Authorization: Bearer ${token}`,
    'Content-Type: application/json',
    'Connection: close',
    framing === 'chunked' ? 'Transfer-Encoding: chunked' : `Content-Length: ${body.length}`,
    '',
    '',
  ].join('\r\n');
  const payload = framing === 'chunked' ? Buffer.concat([Buffer.from(`${body.length.toString(16)}\r\n`), body, Buffer.from('\r\n0\r\n\r\n')]) : body;
  return Buffer.concat([Buffer.from(head, 'latin1'), payload]);
}

const TEXT = 'Caf\u00e9 \u2615 \u0416 \u{1F600}';

describe('request body bytes', () => {
  it.each([
    ['whole, Content-Length', false, 'content-length'],
    ['one byte at a time, Content-Length', true, 'content-length'],
    ['whole, chunked', false, 'chunked'],
    ['one byte at a time, chunked', true, 'chunked'],
  ] as const)('stores the same campaign when sent %s', async (_name, oneByte, framing) => {
    const body = Buffer.from(JSON.stringify({ text: TEXT, from: 'Acme', recipientInfo: [{ msisdn: '1', ClientReference: '\u00e9\u00e9' }] }), 'utf8');
    const response = await rawRequest(campaignRequest(body, framing), oneByte);
    expect(response).toMatch(/^HTTP\/1\.1 202 /);
    const id = /"id":"([0-9a-f-]{36})"/.exec(response)?.[1];
    const row = fixture.store.db.prepare('SELECT text, request_recipients FROM campaigns WHERE id = ?').get(id) as { text: string; request_recipients: string };
    expect(row.text).toBe(TEXT);
    expect(readStoredRecipients(row.request_recipients)).toEqual([{ msisdn: '1', clientReference: '\u00e9\u00e9' }]);
  });

  it.each([false, true])('answers 413 for a chunked body past the limit (one byte at a time: %s)', async (oneByte) => {
    const body = Buffer.from(JSON.stringify({ text: 'x'.repeat(5_000), from: 'Acme', recipientInfo: [{ msisdn: '1' }] }));
    const response = await rawRequest(campaignRequest(body, 'chunked'), oneByte);
    expect(response).toMatch(/^HTTP\/1\.1 413 /);
    expect(response).toContain('application/problem+json');
  });

  it('reads and drops the rest of a refused body, then closes once MAX_DISCARDED_BODY_BYTES are dropped', async () => {
    const { socket, response, closed } = await openRawConnection();
    socket.on('error', () => undefined);
    const declaredBytes = MAX_DISCARDED_BODY_BYTES * 4;
    socket.write(['POST /v1/campaign HTTP/1.1', 'Host: 127.0.0.1', `Authorization: Bearer ${token}`, 'Content-Type: application/json',
      `Content-Length: ${declaredBytes}`, '', ''].join('\r\n'));
    const chunk = Buffer.alloc(64 * 1024, 0x20);
    let writtenBytes = 0;
    while (!socket.destroyed && writtenBytes < declaredBytes) {
      if (!socket.write(chunk)) {
        // Whichever comes first; the other listener is removed so they do not pile up per chunk.
        await new Promise<void>((resolve) => {
          const done = (): void => {
            socket.off('drain', done);
            socket.off('close', done);
            resolve();
          };
          socket.once('drain', done);
          socket.once('close', done);
        });
      }
      writtenBytes += chunk.length;
    }
    await closed;
    expect(response()).toMatch(/^HTTP\/1\.1 413 /);
    expect(response()).not.toMatch(/Connection: close/i);
    // The server kept reading well past the limit, and stopped long before the declared length.
    expect(writtenBytes).toBeGreaterThan(MAX_DISCARDED_BODY_BYTES);
    expect(writtenBytes).toBeLessThan(declaredBytes);
  });

  it('keeps the connection usable after a 413: the next request on it is answered', async () => {
    const { socket, response, closed } = await openRawConnection();
    const big = Buffer.from(JSON.stringify({ text: 'x'.repeat(5_000), from: 'Acme', recipientInfo: [{ msisdn: '1' }] }));
    socket.write(Buffer.concat([Buffer.from(['POST /v1/campaign HTTP/1.1', 'Host: 127.0.0.1', `Authorization: Bearer ${token}`,
      'Content-Type: application/json', `Content-Length: ${big.length}`, '', ''].join('\r\n')), big]));
    socket.write('GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n');
    await closed;
    expect(response()).toMatch(/^HTTP\/1\.1 413 /);
    expect(response()).toMatch(/HTTP\/1\.1 200 OK[\s\S]*Healthy$/);
  });
});

/**
 * Reads a JSON request body with a byte limit. Bytes are counted as they stream in and collection
 * stops at the limit (nothing past it is buffered); a declared Content-Length over the limit is
 * refused before reading. Past the limit the rest of the body is read and thrown away rather than
 * the connection closed: a client still sending would otherwise get EPIPE or ECONNRESET on its write
 * and never see the 413. Discarding is bounded by MAX_DISCARDED_BODY_BYTES, then the socket is closed.
 *
 * Every byte kept is reserved on the request's BodyLease first (the declared Content-Length at once,
 * a chunked body as it arrives): past the client's share (`api.maxBufferedBytesPerClient`) the body
 * is refused with 429, past `api.maxBufferedBytes` across all requests with 503, both with
 * Retry-After, and read and dropped the same way. The JSON is parsed in slices (sliced-json.ts) so
 * a 60 MiB body never holds the event loop for long.
 *
 * A body must also arrive at `api.minBodyBytesPerSecond` on average, measured from the start of the
 * read once `api.bodyRateGraceMs` have passed: a client that trickles bytes (one every 10 s) would
 * otherwise hold its reservation until Node's 300 s request timeout. Such a body is cut with 408
 * (RFC 9110 §15.5.9) and its connection closed. In effect a body of N bytes must be complete within
 * max(grace, N / rate) seconds.
 */
import type { IncomingMessage } from 'node:http';
import { performance } from 'node:perf_hooks';
import { GatewayError } from '../common/errors.js';
import type { BodyLease, Reservation } from './body-budget.js';
import { API_ERROR } from './http-errors.js';
import { JsonSyntaxError, parseJsonInSlices, parseJsonLazily } from './sliced-json.js';

/** Bytes read and thrown away after a 413 before the connection is closed instead. */
export const MAX_DISCARDED_BODY_BYTES = 64 * 1024 * 1024;

/** Media types accepted as JSON: application/json and any +json suffix type (RFC 6839 §3.1). */
const JSON_MEDIA_TYPE = /^application\/(?:[\w.+-]+\+)?json$/i;

/**
 * `lazyArrays` names top-level array members to leave as LazyJsonArray (parsed a run at a time by
 * whoever iterates them); a JsonSyntaxError that iteration throws becomes a 400 through bodyError().
 */
export interface BodyRate {
  /** 0: no minimum. */
  minBytesPerSecond: number;
  graceMs: number;
}

export interface ReadJsonOptions {
  maxBodyBytes: number;
  lease?: BodyLease;
  lazyArrays?: (key: string) => boolean;
  /** Left out: no minimum rate (the caller's deadline, if any, applies). */
  minRate?: BodyRate;
  /** Given the raw body bytes once they are all read, before parsing (the Idempotency-Key's request hash). */
  onBytes?: (bytes: Buffer) => void;
}

/** api.minBodyBytesPerSecond left out: 8 KiB/s, a 64 MiB body in 2h16; a link slower than that is not served. */
export const DEFAULT_MIN_BODY_BYTES_PER_SECOND = 8192;
/** api.bodyRateGraceMs left out: a body's first 10 s are not measured (a slow start, TCP ramp-up). */
export const DEFAULT_BODY_RATE_GRACE_MS = 10_000;

/** How often the rate is checked: often enough that a stalled body is cut soon after its grace. */
const RATE_CHECK_MAX_INTERVAL_MS = 1_000;

export async function readJsonBody(req: IncomingMessage, options: ReadJsonOptions): Promise<unknown> {
  const { maxBodyBytes, lease, lazyArrays, minRate } = options;
  const mediaType = (req.headers['content-type'] ?? '').split(';')[0]!.trim();
  if (!JSON_MEDIA_TYPE.test(mediaType)) {
    throw new GatewayError(API_ERROR.bodyInvalid, 'the request body must be JSON with Content-Type application/json');
  }
  const declared = Number(req.headers['content-length']);
  const hasDeclaredLength = req.headers['content-length'] !== undefined && Number.isFinite(declared);
  if (hasDeclaredLength && declared > maxBodyBytes) {
    discardRest(req, 0);
    throw tooLarge(maxBodyBytes);
  }
  if (lease !== undefined && hasDeclaredLength) {
    const reservation = lease.reserve(declared);
    if (reservation !== 'reserved') {
      discardBody(req);
      throw refusal(reservation);
    }
  }
  // With a declared length the reservation is made; a chunked body reserves as it arrives.
  const bytes = await collect(req, maxBodyBytes, hasDeclaredLength ? undefined : lease, hasDeclaredLength ? declared : undefined, minRate);
  options.onBytes?.(bytes);
  try {
    return lazyArrays === undefined ? await parseJsonInSlices(bytes) : await parseJsonLazily(bytes, lazyArrays);
  } catch (err) {
    throw bodyError(err);
  }
}

/** A JsonSyntaxError as the 400 it means; any other error unchanged. */
export function bodyError(err: unknown): unknown {
  if (!(err instanceof JsonSyntaxError)) return err;
  if (err.kind === 'encoding') return new GatewayError(API_ERROR.bodyInvalid, 'the request body is not valid UTF-8');
  if (err.kind === 'empty') return new GatewayError(API_ERROR.bodyInvalid, 'the request body is empty');
  return new GatewayError(API_ERROR.bodyInvalid, `the request body is not valid JSON: ${err.message}`);
}

function collect(req: IncomingMessage, maxBodyBytes: number, lease: BodyLease | undefined, declaredBytes: number | undefined, minRate: BodyRate | undefined): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let receivedBytes = 0;
    const startedMs = performance.now();
    const rateCheck = minRate === undefined || minRate.minBytesPerSecond <= 0
      ? undefined
      : setInterval(() => {
        const elapsedMs = performance.now() - startedMs;
        if (elapsedMs < minRate.graceMs || receivedBytes * 1000 >= minRate.minBytesPerSecond * elapsedMs) return;
        cleanup();
        chunks.length = 0;
        whole = undefined;
        // Nothing more is read: the 408 is answered with Connection: close (error-boundary.ts).
        req.on('error', () => undefined);
        reject(tooSlow(minRate, receivedBytes, elapsedMs));
      }, Math.min(RATE_CHECK_MAX_INTERVAL_MS, Math.max(10, Math.floor(minRate.graceMs / 4))));
    rateCheck?.unref();
    // With a declared length the body is copied into its final buffer as it arrives: one copy in
    // memory instead of the chunks and their concatenation (HTTP/1.1 framing guarantees the length).
    let whole = declaredBytes !== undefined && declaredBytes > 0 ? Buffer.allocUnsafe(declaredBytes) : undefined;
    const cleanup = (): void => {
      if (rateCheck !== undefined) clearInterval(rateCheck);
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onError);
      req.off('aborted', onAborted);
    };
    const onData = (chunk: Buffer): void => {
      receivedBytes += chunk.length;
      if (receivedBytes > maxBodyBytes) {
        cleanup();
        chunks.length = 0;
        discardRest(req, chunk.length);
        reject(tooLarge(maxBodyBytes));
        return;
      }
      const reservation = lease === undefined ? 'reserved' : lease.reserve(chunk.length);
      if (reservation !== 'reserved') {
        cleanup();
        chunks.length = 0;
        discardRest(req, chunk.length);
        reject(refusal(reservation));
        return;
      }
      if (whole !== undefined && receivedBytes <= whole.length) chunk.copy(whole, receivedBytes - chunk.length);
      else {
        // More than declared (cannot happen through Node's HTTP parser): fall back to collecting.
        if (whole !== undefined) chunks.push(whole.subarray(0, receivedBytes - chunk.length));
        whole = undefined;
        chunks.push(chunk);
      }
    };
    const onEnd = (): void => {
      cleanup();
      if (whole !== undefined) resolve(receivedBytes === whole.length ? whole : whole.subarray(0, receivedBytes));
      else resolve(Buffer.concat(chunks, receivedBytes));
    };
    const onError = (err: Error): void => {
      cleanup();
      reject(new GatewayError(API_ERROR.bodyInvalid, 'the request body could not be read', { cause: err }));
    };
    const onAborted = (): void => onError(new Error('request aborted'));
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onError);
    req.on('aborted', onAborted);
  });
}

/** Reads a refused body and drops it (see discardRest), so the refusal reaches a client still sending. */
export function discardBody(req: IncomingMessage): void {
  discardRest(req, 0);
}

/**
 * Reads the rest of a refused body and drops it, so the 413 reaches a client that is still sending;
 * closes the connection once MAX_DISCARDED_BODY_BYTES have been dropped.
 */
function discardRest(req: IncomingMessage, alreadyDiscardedBytes: number): void {
  let discardedBytes = alreadyDiscardedBytes;
  req.on('data', (chunk: Buffer) => {
    discardedBytes += chunk.length;
    if (discardedBytes > MAX_DISCARDED_BODY_BYTES) req.socket.destroy();
  });
  req.on('error', () => undefined);
  req.resume();
}

function refusal(reservation: Exclude<Reservation, 'reserved'>): GatewayError {
  if (reservation === 'client-full') {
    return new GatewayError(API_ERROR.clientBudgetExhausted, 'this client\'s request bodies in flight hold as many bytes as one client may (api.maxBufferedBytesPerClient); retry later', { retryable: true });
  }
  return new GatewayError(API_ERROR.bodyBudgetExhausted, 'the gateway holds as many request bytes as it may (api.maxBufferedBytes); retry later', { retryable: true });
}

function tooSlow(minRate: BodyRate, receivedBytes: number, elapsedMs: number): GatewayError {
  return new GatewayError(API_ERROR.bodyTooSlow,
    `the request body arrived too slowly: ${receivedBytes} bytes in ${Math.round(elapsedMs)} ms, under the minimum of ${minRate.minBytesPerSecond} bytes per second (api.minBodyBytesPerSecond)`);
}

function tooLarge(maxBodyBytes: number): GatewayError {
  return new GatewayError(API_ERROR.bodyTooLarge, `the request body is larger than ${maxBodyBytes} bytes`);
}

/**
 * Reads a JSON request body with a byte limit. Bytes are counted as they stream in and collection
 * stops at the limit (nothing past it is buffered); a declared Content-Length over the limit is
 * refused before reading. Past the limit the rest of the body is read and thrown away rather than
 * the connection closed: a client still sending would otherwise get EPIPE or ECONNRESET on its write
 * and never see the 413. Discarding is bounded by MAX_DISCARDED_BODY_BYTES, then the socket is closed.
 *
 * Every byte kept is reserved on the request's BodyLease first (the declared Content-Length at once,
 * a chunked body as it arrives): past `api.maxBufferedBytes` across all requests the body is refused
 * with 503 and Retry-After, read and dropped the same way. The JSON is parsed in slices
 * (sliced-json.ts) so a 60 MiB body never holds the event loop for long.
 */
import type { IncomingMessage } from 'node:http';
import { GatewayError } from '../errors.js';
import type { BodyLease } from './body-budget.js';
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
export async function readJsonBody(req: IncomingMessage, maxBodyBytes: number, lease?: BodyLease, lazyArrays?: (key: string) => boolean): Promise<unknown> {
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
  if (lease !== undefined && hasDeclaredLength && !lease.reserve(declared)) {
    discardRest(req, 0);
    throw busy();
  }
  // With a declared length the reservation is made; a chunked body reserves as it arrives.
  const bytes = await collect(req, maxBodyBytes, hasDeclaredLength ? undefined : lease, hasDeclaredLength ? declared : undefined);
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

function collect(req: IncomingMessage, maxBodyBytes: number, lease: BodyLease | undefined, declaredBytes: number | undefined): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let receivedBytes = 0;
    // With a declared length the body is copied into its final buffer as it arrives: one copy in
    // memory instead of the chunks and their concatenation (HTTP/1.1 framing guarantees the length).
    let whole = declaredBytes !== undefined && declaredBytes > 0 ? Buffer.allocUnsafe(declaredBytes) : undefined;
    const cleanup = (): void => {
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
      if (lease !== undefined && !lease.reserve(chunk.length)) {
        cleanup();
        chunks.length = 0;
        discardRest(req, chunk.length);
        reject(busy());
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

function busy(): GatewayError {
  return new GatewayError(API_ERROR.bodyBudgetExhausted, 'the gateway holds as many request bytes as it may (api.maxBufferedBytes); retry later', { retryable: true });
}

function tooLarge(maxBodyBytes: number): GatewayError {
  return new GatewayError(API_ERROR.bodyTooLarge, `the request body is larger than ${maxBodyBytes} bytes`);
}

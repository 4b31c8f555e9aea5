/**
 * Reads an application/x-www-form-urlencoded body (the token endpoints' only media type, RFC 6749
 * §4.3.2) with a byte limit counted while streaming. Repeated fields are kept as arrays so the
 * endpoint can refuse them (RFC 6749 §3.2: parameters MUST NOT be included more than once).
 */
import type { IncomingMessage } from 'node:http';
import type { FormValue } from './token-endpoint.js';

export type FormBody =
  | { ok: true; form: Record<string, FormValue> }
  | { ok: false; status: 400 | 413; description: string };

/** A token request is a few hundred bytes; anything near this is not one. */
export const MAX_FORM_BYTES = 16 * 1024;

const FORM_MEDIA_TYPE = 'application/x-www-form-urlencoded';

export async function readFormBody(req: IncomingMessage, maxBytes = MAX_FORM_BYTES): Promise<FormBody> {
  const mediaType = (req.headers['content-type'] ?? '').split(';')[0]?.trim().toLowerCase();
  if (mediaType !== FORM_MEDIA_TYPE) return { ok: false, status: 400, description: `Content-Type must be ${FORM_MEDIA_TYPE}` };
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > maxBytes) return tooLarge(maxBytes);
  const body = await collect(req, maxBytes);
  if (body === 'too-large') return tooLarge(maxBytes);
  if (body === 'incomplete') return { ok: false, status: 400, description: 'request body ended early' };
  const form: Record<string, FormValue> = {};
  for (const [name, value] of new URLSearchParams(body.toString('utf8'))) {
    const previous = form[name];
    form[name] = previous === undefined ? value : [...(typeof previous === 'string' ? [previous] : previous), value];
  }
  return { ok: true, form };
}

function tooLarge(maxBytes: number): FormBody {
  return { ok: false, status: 413, description: `request body larger than ${maxBytes} bytes` };
}

/**
 * The body; 'too-large' once it passes maxBytes (the rest is drained, never buffered);
 * 'incomplete' when the client goes away before the end.
 */
function collect(req: IncomingMessage, maxBytes: number): Promise<Buffer | 'too-large' | 'incomplete'> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let receivedBytes = 0;
    let settled = false;
    const settle = (outcome: Buffer | 'too-large' | 'incomplete'): void => {
      if (settled) return;
      settled = true;
      chunks.length = 0;
      resolve(outcome);
    };
    req.on('data', (chunk: Buffer) => {
      if (settled) return;
      receivedBytes += chunk.length;
      if (receivedBytes > maxBytes) settle('too-large');
      else chunks.push(chunk);
    });
    req.on('end', () => settle(Buffer.concat(chunks)));
    req.on('error', () => settle('incomplete'));
    req.on('close', () => settle('incomplete'));
  });
}

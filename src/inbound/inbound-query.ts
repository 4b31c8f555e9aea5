/**
 * The query of GET /v1/inbound (issue 14 item 4), parsed and checked: `since` (an ISO-8601
 * date-time with a zone; messages received at or after it), `limit` (1..1000, default 100) and
 * `cursor` (the `next` of the previous page, opaque). A bad value names its field.
 */
import type { InboundCursor } from '../store/inbound-store.js';

export const INBOUND_PAGE_DEFAULT = 100;
export const INBOUND_PAGE_MAX = 1000;
const KNOWN_FIELDS: ReadonlySet<string> = new Set(['since', 'limit', 'cursor']);

/** ISO-8601 date-time with seconds optional, fraction optional, and a required zone (Z or ±hh:mm). */
const ISO_INSTANT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})$/;

export type InboundQuery = { ok: true; after: InboundCursor; limit: number } | { ok: false; field: string; detail: string };

type QueryValue = string | string[] | undefined;

/** The cursor a page's last message gives (`next`). */
export function encodeCursor(cursor: InboundCursor): string {
  return Buffer.from(`${cursor.receivedAtMs}.${cursor.id}`, 'utf8').toString('base64url');
}

function decodeCursor(value: string): InboundCursor | null {
  if (!/^[A-Za-z0-9_-]{1,64}$/.test(value)) return null;
  const match = /^(\d{1,16})\.(\d{1,16})$/.exec(Buffer.from(value, 'base64url').toString('utf8'));
  if (match === null) return null;
  return { receivedAtMs: Number(match[1]), id: Number(match[2]) };
}

function later(a: InboundCursor, b: InboundCursor): InboundCursor {
  return a.receivedAtMs > b.receivedAtMs || (a.receivedAtMs === b.receivedAtMs && a.id > b.id) ? a : b;
}

export function parseInboundQuery(query: Readonly<Record<string, QueryValue>>): InboundQuery {
  for (const [field, value] of Object.entries(query)) {
    if (!KNOWN_FIELDS.has(field)) return { ok: false, field, detail: `unknown query parameter '${field}' (known: since, limit, cursor)` };
    if (Array.isArray(value)) return { ok: false, field, detail: `${field} is given more than once` };
  }
  const since = query['since'] as string | undefined;
  const limitText = query['limit'] as string | undefined;
  const cursorText = query['cursor'] as string | undefined;
  let after: InboundCursor = { receivedAtMs: -1, id: Number.MAX_SAFE_INTEGER };
  if (since !== undefined) {
    const sinceMs = ISO_INSTANT.test(since) ? Date.parse(since) : Number.NaN;
    if (Number.isNaN(sinceMs)) return { ok: false, field: 'since', detail: `since must be an ISO-8601 date-time with a zone, e.g. 2026-11-23T09:30:00Z; got '${since}'` };
    after = { receivedAtMs: sinceMs - 1, id: Number.MAX_SAFE_INTEGER };
  }
  if (cursorText !== undefined) {
    const cursor = decodeCursor(cursorText);
    if (cursor === null) return { ok: false, field: 'cursor', detail: `cursor must be the 'next' value of an earlier page` };
    after = later(after, cursor);
  }
  let limit = INBOUND_PAGE_DEFAULT;
  if (limitText !== undefined) {
    if (!/^[1-9][0-9]{0,3}$/.test(limitText) || Number(limitText) > INBOUND_PAGE_MAX) {
      return { ok: false, field: 'limit', detail: `limit must be a whole number from 1 to ${INBOUND_PAGE_MAX}; got '${limitText}'` };
    }
    limit = Number(limitText);
  }
  return { ok: true, after, limit };
}

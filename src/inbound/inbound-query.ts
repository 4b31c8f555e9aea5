/**
 * The query of GET /v1/inbound, parsed and checked: `since` (an ISO-8601
 * date-time with a zone; messages received at or after it), `limit` (1..1000, default 100) and
 * `cursor` (the `next` of the previous page, opaque). A bad value names its field.
 *
 * Pages follow storage order (the order messages were made whole), not receivedAt: a multi-part
 * message is stored when its last part arrives but received when its first did, so a cursor on
 * receivedAt could skip it. Storage order never goes back.
 */

export const INBOUND_PAGE_DEFAULT = 100;
export const INBOUND_PAGE_MAX = 1000;
const KNOWN_FIELDS: ReadonlySet<string> = new Set(['since', 'limit', 'cursor']);

/** ISO-8601 date-time with seconds optional, fraction optional, and a required zone (Z or ±hh:mm). */
const ISO_INSTANT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})$/;

export type InboundQuery = { ok: true; sinceMs: number | null; afterId: number; limit: number } | { ok: false; field: string; detail: string };

type QueryValue = string | string[] | undefined;

const CURSOR_PREFIX = 'm';

/** The cursor a page's last message gives (`next`): its storage position, opaque to the client. */
export function encodeCursor(storageId: number): string {
  return Buffer.from(`${CURSOR_PREFIX}${storageId}`, 'utf8').toString('base64url');
}

function decodeCursor(value: string): number | null {
  if (!/^[A-Za-z0-9_-]{1,32}$/.test(value)) return null;
  const match = /^m(\d{1,15})$/.exec(Buffer.from(value, 'base64url').toString('utf8'));
  return match === null ? null : Number(match[1]);
}

export function parseInboundQuery(query: Readonly<Record<string, QueryValue>>): InboundQuery {
  for (const [field, value] of Object.entries(query)) {
    if (!KNOWN_FIELDS.has(field)) return { ok: false, field, detail: `unknown query parameter '${field}' (known: since, limit, cursor)` };
    if (Array.isArray(value)) return { ok: false, field, detail: `${field} is given more than once` };
  }
  const since = query['since'] as string | undefined;
  const limitText = query['limit'] as string | undefined;
  const cursorText = query['cursor'] as string | undefined;
  let sinceMs: number | null = null;
  if (since !== undefined) {
    sinceMs = ISO_INSTANT.test(since) ? Date.parse(since) : Number.NaN;
    if (Number.isNaN(sinceMs)) return { ok: false, field: 'since', detail: `since must be an ISO-8601 date-time with a zone, e.g. 2026-11-23T09:30:00Z; got '${since}'` };
  }
  let afterId = 0;
  if (cursorText !== undefined) {
    const cursor = decodeCursor(cursorText);
    if (cursor === null) return { ok: false, field: 'cursor', detail: `cursor must be the 'next' value of an earlier page` };
    afterId = cursor;
  }
  let limit = INBOUND_PAGE_DEFAULT;
  if (limitText !== undefined) {
    if (!/^[1-9][0-9]{0,3}$/.test(limitText) || Number(limitText) > INBOUND_PAGE_MAX) {
      return { ok: false, field: 'limit', detail: `limit must be a whole number from 1 to ${INBOUND_PAGE_MAX}; got '${limitText}'` };
    }
    limit = Number(limitText);
  }
  return { ok: true, sinceMs, afterId, limit };
}

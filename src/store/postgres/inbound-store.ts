/**
 * InboundStore (src/store/sqlite/inbound-store.ts) on PostgreSQL: inbound parts and messages, routes,
 * opt-out keywords and the suppression list. `INSERT OR IGNORE` is `ON CONFLICT DO NOTHING` here.
 *
 * The arrival units of the seam (storeMessage, storePart, completeStaleGroup: one arrival = one
 * transaction) are here too. Parts of one concatenated message may arrive on different nodes at
 * the same moment: each unit on a group first takes an advisory transaction lock on the group's
 * key, so exactly one of them sees the group complete and makes it one message (without the lock
 * two parts committed side by side could each see the group short, and it would wait for the sweep).
 */
import type { ClientRow, InboundPartRow } from '../entities.js';
import { uniqueGroups } from '../sqlite/inbound-store.js';
import type {
  AdmitPart, AssembleGroup, AssembleStaleGroup, InboundDelivery, PartCounts, SweptGroup, InboundListing, InboundMessageView, InboundRouteView, InboundStore, NewInboundMessage, NewInboundPart, OptoutView, PartGroupKey, StoredInbound,
  StoredPart,
} from '../sqlite/inbound-store.js';
import type { Async } from '../ports.js';
import { changes, inTransaction, row, rows, type PgClient, type PgPool, type PgQueryable } from './pool.js';
import { insertCustomerDeliveries, smppPresenceOf } from './smpp-delivery-store.js';
import { insertOutboxRow } from './webhook-store.js';

export type { AssembleGroup, InboundDelivery, StoredInbound, StoredPart } from '../sqlite/inbound-store.js';

const MESSAGE_COLUMNS = `m.id, m.public_id AS "publicId", m.transport, m.sender, m.recipient, m.text, m.received_at AS "receivedAtMs",
  m.client_id AS "clientId", c.name AS "clientName", m.incomplete`;

type MessageRow = Omit<InboundMessageView, 'incomplete'> & { incomplete: number };

function view(r: MessageRow): InboundMessageView {
  return { ...r, incomplete: r.incomplete === 1 };
}

const GROUP = 'transport = $1 AND sender = $2 AND recipient = $3 AND scheme = $4 AND reference = $5 AND total = $6';

function groupParams(key: PartGroupKey): unknown[] {
  return [key.transport, key.sender, key.recipient, key.scheme, key.reference, key.total];
}

const ROUTE_VIEW = `SELECT r.address, r.client_id AS "clientId", c.name AS "clientName", r.created_at AS "createdAtMs"
  FROM inbound_routes r JOIN clients c ON c.id = r.client_id`;

export class PgInboundStore implements Async<InboundStore> {
  constructor(private readonly pool: PgPool) {}

  /** One whole message in one transaction: stored, routed, an opt-out keyword applied, the inbound webhook queued. */
  storeMessage(delivery: InboundDelivery, nowMs: number): Promise<StoredInbound> {
    return inTransaction(this.pool, (client) => deliver(client, delivery, nowMs));
  }

  /** One part in one transaction; the part that completes its group makes it one message, as storeMessage. */
  storePart(
    key: PartGroupKey, part: Pick<NewInboundPart, 'sequence' | 'coding' | 'body' | 'raw' | 'received_at'>, assemble: AssembleGroup, nowMs: number, admit?: AdmitPart,
  ): Promise<StoredPart> {
    return inTransaction(this.pool, async (client): Promise<StoredPart> => {
      await lockGroup(client, key);
      if (admit !== undefined) {
        // Counted without a table lock: parts stored at the same moment on other nodes may each
        // see the count one short, so a cluster can overshoot a bound by its concurrent arrivals.
        const present = await groupParts(client, key);
        if (present.some((p) => p.sequence === part.sequence)) return { kind: 'part-repeated' };
        const counted = await row<{ originator: string; total: string }>(client,
          `SELECT (SELECT COUNT(*) FROM inbound_parts WHERE transport = $1 AND sender = $2) AS originator, (SELECT COUNT(*) FROM inbound_parts) AS total`,
          [key.transport, key.sender]);
        const counts: PartCounts = { originatorParts: Number(counted?.originator ?? 0), totalParts: Number(counted?.total ?? 0), completesGroup: present.length + 1 >= key.total };
        const admission = admit(counts);
        if (admission.kind === 'refuse') return { kind: 'part-refused', limit: admission.limit, originatorParts: counts.originatorParts, totalParts: counts.totalParts };
      }
      if (!(await insertPart(client, { ...key, ...part }))) return { kind: 'part-repeated' };
      const parts = await groupParts(client, key);
      if (parts.length < key.total) return { kind: 'part-stored', stored: parts.length, total: key.total };
      await changes(client, `DELETE FROM inbound_parts WHERE ${GROUP}`, groupParams(key));
      return { kind: 'message', ...(await deliver(client, assemble(parts), nowMs)) };
    });
  }

  /** A group whose parts stopped coming, made a message from what arrived; undefined when it is gone. */
  completeStaleGroup(key: PartGroupKey, assemble: AssembleGroup, nowMs: number): Promise<StoredInbound | undefined> {
    return inTransaction(this.pool, async (client) => {
      await lockGroup(client, key);
      const parts = await groupParts(client, key);
      if (parts.length === 0) return undefined;
      await changes(client, `DELETE FROM inbound_parts WHERE ${GROUP}`, groupParams(key));
      return deliver(client, assemble(parts), nowMs);
    });
  }

  /** As the SQLite store's: the groups of the pageParts oldest stale parts made messages in one transaction. */
  completeStaleGroups(cutoffMs: number, pageParts: number, assemble: AssembleStaleGroup, nowMs: number, _budgetMs?: number): Promise<SweptGroup[]> {
    // No budget here: the slice's statements are awaited, so it never holds the event loop.
    return inTransaction(this.pool, async (client) => {
      const page = await rows<PartGroupKey>(client,
        `SELECT transport, sender, recipient, scheme, reference, total FROM inbound_parts WHERE received_at <= $1 ORDER BY received_at, id LIMIT $2`,
        [cutoffMs, pageParts]);
      const swept: SweptGroup[] = [];
      for (const key of uniqueGroups(page)) {
        await lockGroup(client, key);
        const parts = await groupParts(client, key);
        if (parts.length === 0) continue;
        await changes(client, `DELETE FROM inbound_parts WHERE ${GROUP}`, groupParams(key));
        swept.push({ key, stored: await deliver(client, assemble(key, parts), nowMs) });
      }
      return swept;
    });
  }

  /** False when this part was stored before (a repeat after a reconnect). */
  insertPart(p: NewInboundPart): Promise<boolean> {
    return insertPart(this.pool, p);
  }

  groupParts(key: PartGroupKey): Promise<InboundPartRow[]> {
    return groupParts(this.pool, key);
  }

  async deleteGroup(key: PartGroupKey): Promise<void> {
    await changes(this.pool, `DELETE FROM inbound_parts WHERE ${GROUP}`, groupParams(key));
  }

  staleGroups(cutoffMs: number): Promise<PartGroupKey[]> {
    return rows<PartGroupKey>(this.pool,
      `SELECT transport, sender, recipient, scheme, reference, total FROM inbound_parts
       GROUP BY transport, sender, recipient, scheme, reference, total HAVING MIN(received_at) <= $1`, [cutoffMs]);
  }

  async oldestPartAtMs(): Promise<number | null> {
    return (await row<{ at: number | null }>(this.pool, 'SELECT MIN(received_at) AS at FROM inbound_parts'))?.at ?? null;
  }

  insertMessage(m: NewInboundMessage): Promise<number> {
    return insertMessage(this.pool, m);
  }

  routeClientId(address: string): Promise<number | null> {
    return routeClientId(this.pool, address);
  }

  optoutKeywords(clientId: number): Promise<string[]> {
    return optoutKeywords(this.pool, clientId);
  }

  async setOptoutKeywords(clientId: number, keywords: readonly string[] | null): Promise<void> {
    await changes(this.pool, 'UPDATE clients SET optout_keywords = $1 WHERE id = $2', [keywords === null ? null : JSON.stringify(keywords), clientId]);
  }

  async setInboundWebhook(clientId: number, url: string | null): Promise<void> {
    await changes(this.pool, 'UPDATE clients SET inbound_webhook_url = $1 WHERE id = $2', [url, clientId]);
  }

  addOptout(clientId: number, msisdn: string, source: 'keyword' | 'admin', nowMs: number): Promise<boolean> {
    return addOptout(this.pool, clientId, msisdn, source, nowMs);
  }

  async removeOptout(clientId: number, msisdn: string): Promise<boolean> {
    return (await changes(this.pool, 'DELETE FROM optouts WHERE client_id = $1 AND msisdn = $2', [clientId, msisdn])) === 1;
  }

  listOptouts(clientId: number): Promise<OptoutView[]> {
    return rows<OptoutView>(this.pool,
      'SELECT msisdn, source, created_at AS "createdAtMs" FROM optouts WHERE client_id = $1 ORDER BY created_at, msisdn COLLATE "C"', [clientId]);
  }

  async suppressedNumbers(clientId: number): Promise<Set<string>> {
    return new Set((await rows<{ msisdn: string }>(this.pool, 'SELECT msisdn FROM optouts WHERE client_id = $1', [clientId])).map((r) => r.msisdn));
  }

  async addRoute(clientId: number, address: string, nowMs: number): Promise<void> {
    await changes(this.pool, 'INSERT INTO inbound_routes (client_id, address, created_at) VALUES ($1, $2, $3)', [clientId, address, nowMs]);
  }

  async removeRoute(address: string): Promise<boolean> {
    return (await changes(this.pool, 'DELETE FROM inbound_routes WHERE address = $1', [address])) === 1;
  }

  clientByName(name: string): Promise<ClientRow | undefined> {
    return row<ClientRow>(this.pool, 'SELECT * FROM clients WHERE name = $1', [name]);
  }

  async clientName(clientId: number): Promise<string | undefined> {
    return (await row<{ name: string }>(this.pool, 'SELECT name FROM clients WHERE id = $1', [clientId]))?.name;
  }

  route(address: string): Promise<InboundRouteView | undefined> {
    return row<InboundRouteView>(this.pool, `${ROUTE_VIEW} WHERE r.address = $1`, [address]);
  }

  listRoutes(): Promise<InboundRouteView[]> {
    return rows<InboundRouteView>(this.pool, `${ROUTE_VIEW} ORDER BY c.name COLLATE "C", r.address COLLATE "C"`);
  }

  async listUnrouted(maxRows: number): Promise<InboundMessageView[]> {
    return (await rows<MessageRow>(this.pool,
      `SELECT ${MESSAGE_COLUMNS} FROM inbound_messages m LEFT JOIN clients c ON c.id = m.client_id
       WHERE m.client_id IS NULL ORDER BY m.received_at, m.id LIMIT $1`, [maxRows])).map(view);
  }

  /** The newest maxRows messages, routed or not, oldest first. */
  async listRecent(maxRows: number): Promise<InboundMessageView[]> {
    return (await rows<MessageRow>(this.pool,
      `SELECT * FROM (SELECT ${MESSAGE_COLUMNS} FROM inbound_messages m LEFT JOIN clients c ON c.id = m.client_id
       ORDER BY m.received_at DESC, m.id DESC LIMIT $1) newest ORDER BY "receivedAtMs", id`, [maxRows])).map(view);
  }

  /** The client's messages in storage order (id is the keyset, as on SQLite). */
  async listForClient(clientId: number, listing: InboundListing): Promise<InboundMessageView[]> {
    return (await rows<MessageRow>(this.pool,
      `SELECT ${MESSAGE_COLUMNS} FROM inbound_messages m LEFT JOIN clients c ON c.id = m.client_id
       WHERE m.client_id = $1 AND m.id > $2 AND m.received_at >= $3 ORDER BY m.id LIMIT $4`,
      [clientId, listing.afterId, listing.sinceMs ?? Number.MIN_SAFE_INTEGER, listing.maxRows])).map(view);
  }
}

/** Serialises the units on one part group across nodes, until the transaction ends. */
async function lockGroup(client: PgClient, key: PartGroupKey): Promise<void> {
  await client.query(`SELECT pg_advisory_xact_lock(hashtextextended($1, 1))`,
    [JSON.stringify([key.transport, key.sender, key.recipient, key.scheme, key.reference, key.total])]);
}

async function insertPart(db: PgQueryable, p: NewInboundPart): Promise<boolean> {
  const inserted = await changes(db,
    `INSERT INTO inbound_parts (transport, sender, recipient, scheme, reference, total, sequence, coding, body, raw, received_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11) ON CONFLICT DO NOTHING`,
    [p.transport, p.sender, p.recipient, p.scheme, p.reference, p.total, p.sequence, p.coding, p.body, p.raw, p.received_at]);
  return inserted === 1;
}

function groupParts(db: PgQueryable, key: PartGroupKey): Promise<InboundPartRow[]> {
  return rows<InboundPartRow>(db, `SELECT * FROM inbound_parts WHERE ${GROUP} ORDER BY sequence`, groupParams(key));
}

async function routeClientId(db: PgQueryable, address: string): Promise<number | null> {
  return (await row<{ client_id: number }>(db,
    'SELECT r.client_id FROM inbound_routes r JOIN clients c ON c.id = r.client_id WHERE r.address = $1', [address]))?.client_id ?? null;
}

async function optoutKeywords(db: PgQueryable, clientId: number): Promise<string[]> {
  const raw = (await row<{ optout_keywords: string | null }>(db, 'SELECT optout_keywords FROM clients WHERE id = $1', [clientId]))?.optout_keywords ?? null;
  if (raw === null) return [];
  const parsed: unknown = JSON.parse(raw);
  return Array.isArray(parsed) ? parsed.filter((k): k is string => typeof k === 'string') : [];
}

async function insertMessage(db: PgQueryable, m: NewInboundMessage): Promise<number> {
  const inserted = await row<{ id: number }>(db,
    `INSERT INTO inbound_messages (public_id, transport, sender, recipient, text, raw, received_at, client_id, incomplete)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) RETURNING id`,
    [m.publicId, m.transport, m.sender, m.recipient, m.text, m.raw, m.receivedAtMs, m.clientId, m.incomplete ? 1 : 0]);
  return inserted!.id;
}

async function addOptout(db: PgQueryable, clientId: number, msisdn: string, source: 'keyword' | 'admin', nowMs: number): Promise<boolean> {
  return (await changes(db,
    'INSERT INTO optouts (client_id, msisdn, source, created_at) VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING', [clientId, msisdn, source, nowMs])) === 1;
}

/** As InboundStore's deliver on h-seam: route, store, opt-out keyword (complete messages only), queue the webhook. */
async function deliver(client: PgClient, delivery: InboundDelivery, nowMs: number): Promise<StoredInbound> {
  const { message } = delivery;
  const clientId = await routeClientId(client, message.recipient);
  await insertMessage(client, { ...message, clientId });
  const stored = { publicId: message.publicId, clientId, incomplete: message.incomplete };
  if (clientId === null) return { ...stored, optedOut: false };
  const optedOut = !message.incomplete && delivery.optsOut(await optoutKeywords(client, clientId)) && (await addOptout(client, clientId, message.sender, 'keyword', nowMs));
  const toCustomer = delivery.customerDeliveries === undefined ? [] : delivery.customerDeliveries(await smppPresenceOf(client, clientId), nowMs);
  if (toCustomer.length > 0) {
    await insertCustomerDeliveries(client, toCustomer);
    return { ...stored, optedOut, smpp: true };
  }
  await insertOutboxRow(client, { kind: 'inbound', clientId, recipientId: null, body: delivery.webhookBody, nowMs });
  return { ...stored, optedOut };
}

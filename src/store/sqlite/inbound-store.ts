/**
 * SQL of inbound SMS (migrations/1764300000001-inbound.ts): parts as they arrive, whole messages,
 * routes from an addressed number to a client, per-client opt-out keywords and suppression list,
 * and the client's inbound webhook URL. Prepared statements on the raw better-sqlite3 handle. The
 * writes of one arrival are one method and one transaction here (storeMessage, storePart,
 * completeStaleGroup: nothing holds a transaction across an await); what the arrival
 * means (assembly, opt-out words, the webhook body) stays in src/inbound and comes in as data and
 * pure functions.
 */
import { performance } from 'node:perf_hooks';
import type { SqliteDatabase } from './database.js';
import type { ClientRow, InboundPartRow } from '../entities.js';
import type { CustomerDeliveryWrite, SmppAccountPresence } from '../smpp-delivery-port.js';
import { insertCustomerDeliveries, smppPresenceOf } from './smpp-delivery-store.js';
import { insertOutboxRow } from './webhook-store.js';

export interface PartGroupKey {
  transport: string;
  sender: string;
  recipient: string;
  scheme: string;
  reference: number;
  total: number;
}

export type NewInboundPart = Omit<InboundPartRow, 'id'>;

export interface NewInboundMessage {
  publicId: string;
  transport: string;
  sender: string;
  recipient: string;
  text: string;
  raw: string;
  receivedAtMs: number;
  clientId: number | null;
  incomplete: boolean;
}

/** A whole message ready to store, with what routing it to a client needs. */
export interface InboundDelivery {
  message: Omit<NewInboundMessage, 'clientId'>;
  /** The client's inbound webhook body, queued in the same transaction when the message is routed. */
  webhookBody: string;
  /** Whether the text opts its sender out, given the routed client's keywords. Pure: called inside the transaction. */
  optsOut(keywords: readonly string[]): boolean;
  /**
   * The deliver_sm rows to store instead of the webhook when the routed client takes its messages
   * over SMPP (src/smpp-customer/inbound-deliver-sm.ts decides); empty for the webhook. Pure: called
   * inside the transaction with what the store read of the client's SMPP accounts. Absent: the webhook.
   */
  customerDeliveries?(accounts: readonly SmppAccountPresence[], nowMs: number): CustomerDeliveryWrite[];
}

/** Where a stored message went: client null when no route matched (kept, never sent). */
export interface StoredInbound {
  publicId: string;
  clientId: number | null;
  incomplete: boolean;
  optedOut: boolean;
  /** Present (true) when it went to an SMPP customer as deliver_sm rows instead of the webhook. */
  smpp?: true;
}

export type StoredPart =
  | { kind: 'part-stored'; stored: number; total: number }
  | { kind: 'part-repeated' }
  | { kind: 'part-refused'; limit: PartLimitName; originatorParts: number; totalParts: number }
  | ({ kind: 'message' } & StoredInbound);

/** Builds a whole message from a group's parts (in sequence order). Pure: called inside the transaction. */
export type AssembleGroup = (parts: readonly InboundPartRow[]) => InboundDelivery;

/** Which bound on stored parts refused a part. */
export type PartLimitName = 'originator' | 'total';

/** What the store counts before it stores a new part (the part itself not included). */
export interface PartCounts {
  /** Parts stored for this transport and sender (the originator), every group. */
  originatorParts: number;
  /** Parts stored on the gateway. */
  totalParts: number;
  /** The part is the last one its group lacks: storing it removes the group's parts. */
  completesGroup: boolean;
}

/** Decides whether a new part may be stored. Pure: called inside the transaction (src/inbound/part-limits.ts). */
export type AdmitPart = (counts: PartCounts) => { kind: 'accept' } | { kind: 'refuse'; limit: PartLimitName };

/** A stale group made one message by completeStaleGroups, with the group it was. */
export interface SweptGroup {
  key: PartGroupKey;
  stored: StoredInbound;
}

/** Builds a stale group's message from its parts (in sequence order). Pure: called inside the transaction. */
export type AssembleStaleGroup = (key: PartGroupKey, parts: readonly InboundPartRow[]) => InboundDelivery;

export interface InboundMessageView {
  id: number;
  publicId: string;
  transport: string;
  sender: string;
  recipient: string;
  text: string;
  receivedAtMs: number;
  clientId: number | null;
  clientName: string | null;
  incomplete: boolean;
}

export interface InboundRouteView {
  address: string;
  clientId: number;
  clientName: string;
  createdAtMs: number;
}

export interface OptoutView {
  msisdn: string;
  source: 'keyword' | 'admin';
  createdAtMs: number;
}

/** A client's listing: received at or after sinceMs (null: any time), stored after afterId, in storage order. */
export interface InboundListing {
  sinceMs: number | null;
  afterId: number;
  maxRows: number;
}

const MESSAGE_COLUMNS = `m.id, m.public_id AS publicId, m.transport, m.sender, m.recipient, m.text, m.received_at AS receivedAtMs,
  m.client_id AS clientId, c.name AS clientName, m.incomplete`;

type MessageRow = Omit<InboundMessageView, 'incomplete'> & { incomplete: number };

function view(row: MessageRow): InboundMessageView {
  return { ...row, incomplete: row.incomplete === 1 };
}

export class InboundStore {
  private readonly s;

  constructor(private readonly db: SqliteDatabase) {
    this.s = {
      // A part the SMSC or modem hands on again (no ack reached it before a reconnect) is ignored.
      insertPart: db.prepare(
        `INSERT OR IGNORE INTO inbound_parts (transport, sender, recipient, scheme, reference, total, sequence, coding, body, raw, received_at)
         VALUES (@transport, @sender, @recipient, @scheme, @reference, @total, @sequence, @coding, @body, @raw, @received_at)`,
      ),
      groupParts: db.prepare<[string, string, string, string, number, number], InboundPartRow>(
        `SELECT * FROM inbound_parts WHERE transport = ? AND sender = ? AND recipient = ? AND scheme = ? AND reference = ? AND total = ? ORDER BY sequence`,
      ),
      deleteGroup: db.prepare<[string, string, string, string, number, number]>(
        `DELETE FROM inbound_parts WHERE transport = ? AND sender = ? AND recipient = ? AND scheme = ? AND reference = ? AND total = ?`,
      ),
      staleGroups: db.prepare<[number], PartGroupKey>(
        `SELECT transport, sender, recipient, scheme, reference, total FROM inbound_parts
         GROUP BY transport, sender, recipient, scheme, reference, total HAVING MIN(received_at) <= ?`,
      ),
      oldestPart: db.prepare<[]>(`SELECT MIN(received_at) FROM inbound_parts`).pluck(),
      // Oldest parts first, by the received_at index: a page costs its LIMIT, however many parts are stored.
      staleParts: db.prepare<[number, number], PartGroupKey>(
        `SELECT transport, sender, recipient, scheme, reference, total FROM inbound_parts WHERE received_at <= ? ORDER BY received_at, id LIMIT ?`,
      ),
      originatorParts: db.prepare<[string, string]>(`SELECT COUNT(*) FROM inbound_parts WHERE transport = ? AND sender = ?`).pluck(),
      totalParts: db.prepare<[]>(`SELECT COUNT(*) FROM inbound_parts`).pluck(),
      insertMessage: db.prepare(
        `INSERT INTO inbound_messages (public_id, transport, sender, recipient, text, raw, received_at, client_id, incomplete)
         VALUES (@publicId, @transport, @sender, @recipient, @text, @raw, @receivedAtMs, @clientId, @incomplete)`,
      ),
      routeClient: db.prepare<[string]>(
        `SELECT r.client_id FROM inbound_routes r JOIN clients c ON c.id = r.client_id WHERE r.address = ?`,
      ).pluck(),
      clientInbound: db.prepare<[number], { optout_keywords: string | null }>(`SELECT optout_keywords FROM clients WHERE id = ?`),
      addOptout: db.prepare<[number, string, string, number]>(
        `INSERT OR IGNORE INTO optouts (client_id, msisdn, source, created_at) VALUES (?, ?, ?, ?)`,
      ),
      removeOptout: db.prepare<[number, string]>(`DELETE FROM optouts WHERE client_id = ? AND msisdn = ?`),
      listOptouts: db.prepare<[number], OptoutView>(
        `SELECT msisdn, source, created_at AS createdAtMs FROM optouts WHERE client_id = ? ORDER BY created_at, msisdn`,
      ),
      suppressed: db.prepare<[number]>(`SELECT msisdn FROM optouts WHERE client_id = ?`).pluck(),
      addRoute: db.prepare<[number, string, number]>(`INSERT INTO inbound_routes (client_id, address, created_at) VALUES (?, ?, ?)`),
      removeRoute: db.prepare<[string]>(`DELETE FROM inbound_routes WHERE address = ?`),
      routeByAddress: db.prepare<[string], InboundRouteView>(
        `SELECT r.address, r.client_id AS clientId, c.name AS clientName, r.created_at AS createdAtMs
         FROM inbound_routes r JOIN clients c ON c.id = r.client_id WHERE r.address = ?`,
      ),
      listRoutes: db.prepare<[], InboundRouteView>(
        `SELECT r.address, r.client_id AS clientId, c.name AS clientName, r.created_at AS createdAtMs
         FROM inbound_routes r JOIN clients c ON c.id = r.client_id ORDER BY c.name, r.address`,
      ),
      setInboundWebhook: db.prepare<[string | null, number]>(`UPDATE clients SET inbound_webhook_url = ? WHERE id = ?`),
      setOptoutKeywords: db.prepare<[string | null, number]>(`UPDATE clients SET optout_keywords = ? WHERE id = ?`),
      clientByName: db.prepare<[string], ClientRow>(`SELECT * FROM clients WHERE name = ?`),
      clientName: db.prepare<[number]>(`SELECT name FROM clients WHERE id = ?`).pluck(),
      unrouted: db.prepare<[number], MessageRow>(
        `SELECT ${MESSAGE_COLUMNS} FROM inbound_messages m LEFT JOIN clients c ON c.id = m.client_id
         WHERE m.client_id IS NULL ORDER BY m.received_at, m.id LIMIT ?`,
      ),
      recent: db.prepare<[number], MessageRow>(
        `SELECT * FROM (SELECT ${MESSAGE_COLUMNS} FROM inbound_messages m LEFT JOIN clients c ON c.id = m.client_id
         ORDER BY m.received_at DESC, m.id DESC LIMIT ?) ORDER BY receivedAtMs, id`,
      ),
      // Storage order (id) is the keyset: a multi-part message is stored after messages received
      // later than its first part, so a keyset on received_at could skip it.
      forClient: db.prepare<[number, number, number, number], MessageRow>(
        `SELECT ${MESSAGE_COLUMNS} FROM inbound_messages m LEFT JOIN clients c ON c.id = m.client_id
         WHERE m.client_id = ? AND m.id > ? AND m.received_at >= ?
         ORDER BY m.id LIMIT ?`,
      ),
    };
  }

  /**
   * One whole message in one transaction: stored, routed by its To address, the sender added to
   * the client's suppression list when the text is an opt-out keyword (complete messages only),
   * and the client's inbound webhook queued.
   */
  storeMessage(delivery: InboundDelivery, nowMs: number): StoredInbound {
    return this.db.transaction(() => this.deliver(delivery, nowMs))();
  }

  /**
   * One part of a concatenated message in one transaction: stored (a repeat is ignored), and when
   * it completes its group, the group becomes a message as storeMessage does.
   */
  storePart(
    key: PartGroupKey, part: Pick<NewInboundPart, 'sequence' | 'coding' | 'body' | 'raw' | 'received_at'>, assemble: AssembleGroup, nowMs: number, admit?: AdmitPart,
  ): StoredPart {
    return this.db.transaction((): StoredPart => {
      if (admit !== undefined) {
        const present = this.groupParts(key);
        if (present.some((p) => p.sequence === part.sequence)) return { kind: 'part-repeated' };
        const counts: PartCounts = {
          originatorParts: this.s.originatorParts.get(key.transport, key.sender) as number,
          totalParts: this.s.totalParts.get() as number,
          completesGroup: present.length + 1 >= key.total,
        };
        const admission = admit(counts);
        if (admission.kind === 'refuse') return { kind: 'part-refused', limit: admission.limit, originatorParts: counts.originatorParts, totalParts: counts.totalParts };
      }
      if (!this.insertPart({ ...keyColumns(key), ...part })) return { kind: 'part-repeated' };
      const parts = this.groupParts(key);
      if (parts.length < key.total) return { kind: 'part-stored', stored: parts.length, total: key.total };
      this.deleteGroup(key);
      return { kind: 'message', ...this.deliver(assemble(parts), nowMs) };
    })();
  }

  /**
   * A group whose parts stopped coming, made into a message from what arrived, in one transaction.
   * Undefined when the group is gone (completed or swept meanwhile).
   */
  completeStaleGroup(key: PartGroupKey, assemble: AssembleGroup, nowMs: number): StoredInbound | undefined {
    return this.db.transaction((): StoredInbound | undefined => {
      const parts = this.groupParts(key);
      if (parts.length === 0) return undefined;
      this.deleteGroup(key);
      return this.deliver(assemble(parts), nowMs);
    })();
  }

  /**
   * The groups of the pageParts oldest parts received at or before cutoffMs (so at most pageParts
   * groups, each stale: its first part is at least that old), each made one message from what
   * arrived, in ONE transaction (one commit, so one fsync, for the slice). The caller sweeps in
   * such slices and yields to the event loop between them; an empty result means none is left.
   * Stops taking groups once budgetMs of the slice is spent (at least one group per slice).
   */
  completeStaleGroups(cutoffMs: number, pageParts: number, assemble: AssembleStaleGroup, nowMs: number, budgetMs = Number.POSITIVE_INFINITY): SweptGroup[] {
    return this.db.transaction((): SweptGroup[] => {
      const swept: SweptGroup[] = [];
      // better-sqlite3 runs the slice on the event loop: past budgetMs of work it commits what it has.
      const startedMs = performance.now();
      for (const key of uniqueGroups(this.s.staleParts.all(cutoffMs, pageParts))) {
        if (swept.length > 0 && performance.now() - startedMs >= budgetMs) break;
        const parts = this.groupParts(key);
        if (parts.length === 0) continue;
        this.deleteGroup(key);
        swept.push({ key, stored: this.deliver(assemble(key, parts), nowMs) });
      }
      return swept;
    })();
  }

  private deliver(delivery: InboundDelivery, nowMs: number): StoredInbound {
    const { message } = delivery;
    const clientId = this.routeClientId(message.recipient);
    this.insertMessage({ ...message, clientId });
    const stored = { publicId: message.publicId, clientId, incomplete: message.incomplete };
    if (clientId === null) return { ...stored, optedOut: false };
    const optedOut = !message.incomplete && delivery.optsOut(this.optoutKeywords(clientId)) && this.addOptout(clientId, message.sender, 'keyword', nowMs);
    const toCustomer = delivery.customerDeliveries?.(smppPresenceOf(this.db, clientId), nowMs) ?? [];
    if (toCustomer.length > 0) {
      insertCustomerDeliveries(this.db, toCustomer);
      return { ...stored, optedOut, smpp: true };
    }
    insertOutboxRow(this.db, { kind: 'inbound', clientId, recipientId: null, body: delivery.webhookBody, nowMs });
    return { ...stored, optedOut };
  }

  /** False when this part was stored before (a repeat after a reconnect). */
  insertPart(part: NewInboundPart): boolean {
    return this.s.insertPart.run(part).changes === 1;
  }

  groupParts(key: PartGroupKey): InboundPartRow[] {
    return this.s.groupParts.all(key.transport, key.sender, key.recipient, key.scheme, key.reference, key.total);
  }

  deleteGroup(key: PartGroupKey): void {
    this.s.deleteGroup.run(key.transport, key.sender, key.recipient, key.scheme, key.reference, key.total);
  }

  /** Groups whose first part arrived at or before cutoffMs. */
  staleGroups(cutoffMs: number): PartGroupKey[] {
    return this.s.staleGroups.all(cutoffMs);
  }

  oldestPartAtMs(): number | null {
    return (this.s.oldestPart.get() as number | null | undefined) ?? null;
  }

  insertMessage(message: NewInboundMessage): number {
    return Number(this.s.insertMessage.run({ ...message, incomplete: message.incomplete ? 1 : 0 }).lastInsertRowid);
  }

  routeClientId(address: string): number | null {
    return (this.s.routeClient.get(address) as number | undefined) ?? null;
  }

  /** The client's folded opt-out keywords; empty when off. */
  optoutKeywords(clientId: number): string[] {
    const raw = this.s.clientInbound.get(clientId)?.optout_keywords ?? null;
    if (raw === null) return [];
    const parsed: unknown = JSON.parse(raw);
    return Array.isArray(parsed) ? parsed.filter((k): k is string => typeof k === 'string') : [];
  }

  setOptoutKeywords(clientId: number, keywords: readonly string[] | null): void {
    this.s.setOptoutKeywords.run(keywords === null ? null : JSON.stringify(keywords), clientId);
  }

  setInboundWebhook(clientId: number, url: string | null): void {
    this.s.setInboundWebhook.run(url, clientId);
  }

  /** False when the number was already on the list. */
  addOptout(clientId: number, msisdn: string, source: 'keyword' | 'admin', nowMs: number): boolean {
    return this.s.addOptout.run(clientId, msisdn, source, nowMs).changes === 1;
  }

  removeOptout(clientId: number, msisdn: string): boolean {
    return this.s.removeOptout.run(clientId, msisdn).changes === 1;
  }

  listOptouts(clientId: number): OptoutView[] {
    return this.s.listOptouts.all(clientId);
  }

  suppressedNumbers(clientId: number): Set<string> {
    return new Set(this.s.suppressed.all(clientId) as string[]);
  }

  addRoute(clientId: number, address: string, nowMs: number): void {
    this.s.addRoute.run(clientId, address, nowMs);
  }

  removeRoute(address: string): boolean {
    return this.s.removeRoute.run(address).changes === 1;
  }

  clientByName(name: string): ClientRow | undefined {
    return this.s.clientByName.get(name);
  }

  /** The name of client `clientId`, or undefined when there is none. */
  clientName(clientId: number): string | undefined {
    return this.s.clientName.get(clientId) as string | undefined;
  }

  route(address: string): InboundRouteView | undefined {
    return this.s.routeByAddress.get(address);
  }

  listRoutes(): InboundRouteView[] {
    return this.s.listRoutes.all();
  }

  listUnrouted(maxRows: number): InboundMessageView[] {
    return this.s.unrouted.all(maxRows).map(view);
  }

  /** The newest maxRows messages, routed or not, oldest first. */
  listRecent(maxRows: number): InboundMessageView[] {
    return this.s.recent.all(maxRows).map(view);
  }

  /** The client's messages in storage order (newest last). */
  listForClient(clientId: number, listing: InboundListing): InboundMessageView[] {
    return this.s.forClient.all(clientId, listing.afterId, listing.sinceMs ?? Number.MIN_SAFE_INTEGER, listing.maxRows).map(view);
  }
}

/** The distinct groups of a page of parts, in the page's order (the store's rows carry no other fields). */
export function uniqueGroups(rows: readonly PartGroupKey[]): PartGroupKey[] {
  const seen = new Set<string>();
  const groups: PartGroupKey[] = [];
  for (const r of rows) {
    const key: PartGroupKey = { transport: r.transport, sender: r.sender, recipient: r.recipient, scheme: r.scheme, reference: Number(r.reference), total: Number(r.total) };
    const id = JSON.stringify([key.transport, key.sender, key.recipient, key.scheme, key.reference, key.total]);
    if (seen.has(id)) continue;
    seen.add(id);
    groups.push(key);
  }
  return groups;
}

function keyColumns(key: PartGroupKey): Pick<InboundPartRow, 'transport' | 'sender' | 'recipient' | 'scheme' | 'reference' | 'total'> {
  return { transport: key.transport, sender: key.sender, recipient: key.recipient, scheme: key.scheme, reference: key.reference, total: key.total };
}

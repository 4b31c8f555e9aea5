/**
 * The admin operations behind `smsgate inbound …`, `smsgate client set-inbound-webhook`,
 * `smsgate client set-optout` and `smsgate optout …` (issue 14 items 2, 3 and 5). Clients are named;
 * a missing one is CLIENT_NOT_FOUND, a number routed to someone already INBOUND_ROUTE_EXISTS (exit 1).
 */
import { GatewayError } from '../errors.js';
import type { SqliteDatabase } from '../store/database.js';
import type { ClientRow } from '../store/entities.js';
import { InboundStore, type InboundMessageView, type InboundRouteView, type OptoutView } from '../store/inbound-store.js';

export interface RouteJson {
  to: string;
  client: string;
  createdAt: string;
}

export interface InboundMessageJson {
  id: string;
  transport: string;
  from: string;
  to: string;
  client: string | null;
  text: string;
  receivedAt: string;
  incomplete: boolean;
}

export function routeJson(route: InboundRouteView): RouteJson {
  return { to: route.address, client: route.clientName, createdAt: new Date(route.createdAtMs).toISOString() };
}

export function inboundMessageJson(message: InboundMessageView): InboundMessageJson {
  return {
    id: message.publicId,
    transport: message.transport,
    from: message.sender,
    to: message.recipient,
    client: message.clientName,
    text: message.text,
    receivedAt: new Date(message.receivedAtMs).toISOString(),
    incomplete: message.incomplete,
  };
}

export class InboundAdmin {
  private readonly store: InboundStore;

  constructor(db: SqliteDatabase, private readonly now: () => number = Date.now) {
    this.store = new InboundStore(db);
  }

  client(name: string): ClientRow {
    const row = this.store.clientByName(name);
    if (row === undefined) throw new GatewayError('CLIENT_NOT_FOUND', `no client named "${name}"`);
    return row;
  }

  /** `address` is already normalised (parseRouteNumber). */
  addRoute(clientName: string, address: string): RouteJson {
    const client = this.client(clientName);
    const existing = this.store.route(address);
    if (existing !== undefined) {
      throw new GatewayError('INBOUND_ROUTE_EXISTS', `${address} is already routed to client "${existing.clientName}"; remove that route first`);
    }
    this.store.addRoute(client.id, address, this.now());
    return routeJson(this.store.route(address) as InboundRouteView);
  }

  removeRoute(address: string): RouteJson {
    const existing = this.store.route(address);
    if (existing === undefined) throw new GatewayError('INBOUND_ROUTE_NOT_FOUND', `no route for ${address}`);
    this.store.removeRoute(address);
    return routeJson(existing);
  }

  listRoutes(): RouteJson[] {
    return this.store.listRoutes().map(routeJson);
  }

  listMessages(options: { unrouted: boolean; maxRows: number }): InboundMessageJson[] {
    const rows = options.unrouted ? this.store.listUnrouted(options.maxRows) : this.store.listRecent(options.maxRows);
    return rows.map(inboundMessageJson);
  }

  setInboundWebhook(clientName: string, url: string | null): { client: string; inboundWebhookUrl: string | null } {
    const client = this.client(clientName);
    this.store.setInboundWebhook(client.id, url);
    return { client: client.name, inboundWebhookUrl: url };
  }

  setOptoutKeywords(clientName: string, keywords: readonly string[] | null): { client: string; keywords: string[] | null } {
    const client = this.client(clientName);
    this.store.setOptoutKeywords(client.id, keywords);
    return { client: client.name, keywords: keywords === null ? null : [...keywords] };
  }

  optoutKeywords(clientName: string): string[] {
    return this.store.optoutKeywords(this.client(clientName).id);
  }

  listOptouts(clientName: string): OptoutView[] {
    return this.store.listOptouts(this.client(clientName).id);
  }

  /** True when the number was not on the list before. */
  addOptout(clientName: string, msisdn: string): boolean {
    return this.store.addOptout(this.client(clientName).id, msisdn, 'admin', this.now());
  }

  removeOptout(clientName: string, msisdn: string): boolean {
    const client = this.client(clientName);
    const removed = this.store.removeOptout(client.id, msisdn);
    if (!removed) throw new GatewayError('OPTOUT_NOT_FOUND', `${msisdn} is not on the suppression list of client "${client.name}"`);
    return removed;
  }
}

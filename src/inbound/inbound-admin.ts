/**
 * The admin operations behind `smsgate inbound …`, `smsgate client set-inbound-webhook`,
 * `smsgate client set-optout` and `smsgate optout …`. Clients are named;
 * a missing one is CLIENT_NOT_FOUND, a number routed to someone already INBOUND_ROUTE_EXISTS (exit 1).
 */
import { GatewayError } from '../common/errors.js';
import type { ClientRow } from '../store/entities.js';
import type { InboundMessageView, InboundRouteView, InboundStore, OptoutView } from '../store/sqlite/inbound-store.js';
import type { Async } from '../store/ports.js';

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
  constructor(private readonly store: Async<InboundStore>, private readonly now: () => number = Date.now) {}

  async client(name: string): Promise<ClientRow> {
    const row = await this.store.clientByName(name);
    if (row === undefined) throw new GatewayError('CLIENT_NOT_FOUND', `no client named "${name}"`);
    return row;
  }

  /** `address` is already normalised (parseRouteNumber). */
  async addRoute(clientName: string, address: string): Promise<RouteJson> {
    const client = await this.client(clientName);
    const existing = await this.store.route(address);
    if (existing !== undefined) {
      throw new GatewayError('INBOUND_ROUTE_EXISTS', `${address} is already routed to client "${existing.clientName}"; remove that route first`);
    }
    await this.store.addRoute(client.id, address, this.now());
    return routeJson((await this.store.route(address)) as InboundRouteView);
  }

  async removeRoute(address: string): Promise<RouteJson> {
    const existing = await this.store.route(address);
    if (existing === undefined) throw new GatewayError('INBOUND_ROUTE_NOT_FOUND', `no route for ${address}`);
    await this.store.removeRoute(address);
    return routeJson(existing);
  }

  async listRoutes(): Promise<RouteJson[]> {
    return (await this.store.listRoutes()).map(routeJson);
  }

  async listMessages(options: { unrouted: boolean; maxRows: number }): Promise<InboundMessageJson[]> {
    const rows = options.unrouted ? await this.store.listUnrouted(options.maxRows) : await this.store.listRecent(options.maxRows);
    return rows.map(inboundMessageJson);
  }

  async setInboundWebhook(clientName: string, url: string | null): Promise<{ client: string; inboundWebhookUrl: string | null }> {
    const client = await this.client(clientName);
    await this.store.setInboundWebhook(client.id, url);
    return { client: client.name, inboundWebhookUrl: url };
  }

  async setOptoutKeywords(clientName: string, keywords: readonly string[] | null): Promise<{ client: string; keywords: string[] | null }> {
    const client = await this.client(clientName);
    await this.store.setOptoutKeywords(client.id, keywords);
    return { client: client.name, keywords: keywords === null ? null : [...keywords] };
  }

  async optoutKeywords(clientName: string): Promise<string[]> {
    return this.store.optoutKeywords((await this.client(clientName)).id);
  }

  async listOptouts(clientName: string): Promise<OptoutView[]> {
    return this.store.listOptouts((await this.client(clientName)).id);
  }

  /** True when the number was not on the list before. */
  async addOptout(clientName: string, msisdn: string): Promise<boolean> {
    return this.store.addOptout((await this.client(clientName)).id, msisdn, 'admin', this.now());
  }

  async removeOptout(clientName: string, msisdn: string): Promise<boolean> {
    const client = await this.client(clientName);
    const removed = await this.store.removeOptout(client.id, msisdn);
    if (!removed) throw new GatewayError('OPTOUT_NOT_FOUND', `${msisdn} is not on the suppression list of client "${client.name}"`);
    return removed;
  }
}

/**
 * The facts behind /status, /status.json and `smsgate status`: readiness, version and uptime,
 * transports and their links (SMPP binds, modems) with what their parts came to, queue depths,
 * recent campaigns (in progress and finished) with their outcome breakdown, webhooks per client
 * (breaker, last real error, backlog), each client's credits and send rate, the SMPP server's
 * customer sessions and the deliveries waiting for them, and recent errors, clients named by name. One function
 * gathers them from a running gateway; storedStatusFacts gives the part the database alone can
 * tell, for `smsgate status` when no serve answers.
 */
import { isLow, type ClientCredits } from '../accounts/low-credits.js';
import type { ServerSessionView, SmppServerStatusSource } from '../smpp-server/contracts.js';
import type { Async } from '../store/ports.js';
import type { CampaignProgress, ClientWebhooks, QueuedParts, StatusQueries, UndeliveredGroup } from '../store/sqlite/status-store.js';
import type { ModemRadio, Transport, TransportState } from '../transports/transport.js';
import { outcomeBreakdown, type OutcomeBreakdown } from './campaign-outcomes.js';
import type { Readiness } from './readiness.js';
import type { RecentError, RecentErrors } from './recent-errors.js';
import type { PartCounts, TransportActivity } from './transport-activity.js';
import type { BreakerState, WebhookHealth } from './webhook-health.js';

/** Campaigns in progress shown at most (newest first). */
export const MAX_CAMPAIGNS_SHOWN = 20;
/** Finished campaigns shown at most (newest first), after those in progress. */
export const MAX_FINISHED_CAMPAIGNS_SHOWN = 10;

export interface LinkFacts {
  name: string;
  state: TransportState['state'];
  /** ISO-8601; null when the change was not seen (before the admin started watching). */
  since: string | null;
  lastError: string | null;
  windowUsed: number;
  windowSize: number;
  modem?: ModemRadio & { registered: boolean };
}

export interface TransportFacts {
  name: string;
  type: Transport['type'];
  state: TransportState['state'];
  since: string | null;
  /** 'bound' detail or 'down' reason as the transport gives it. */
  detail: string | null;
  /** Configured cap, and what was submitted over the last ten seconds. */
  maxPerSecond: number;
  ratePerSecond: number;
  /** The same cap and rate per minute; the page shows these for modems (operators count modem sends per minute). */
  maxPerMinute: number;
  /** Parts submitted over the last whole minute. */
  ratePerMinute: number;
  /** What the parts handed to it since start came to. */
  parts: PartCounts;
  /** The transport's down reason now, else the last error of any of its links; null when none. */
  lastError: string | null;
  windowUsed: number;
  windowSize: number;
  links: LinkFacts[];
}

export interface CampaignFacts {
  id: string;
  name: string;
  client: string;
  state: string;
  createdAt: string;
  total: number;
  sent: number;
  delivered: number;
  undelivered: number;
  pending: number;
  /** Failed, or ready with no recipient pending. */
  finished: boolean;
  outcomes: OutcomeBreakdown;
}

export interface WebhookClientFacts extends ClientWebhooks {
  /** null: the endpoint was not tried since this serve started (or serve is not answering). */
  breaker: BreakerState | null;
  /** The last real error of a request to the endpoint (never CIRCUIT_OPEN), and when. */
  lastError: string | null;
  lastErrorAt: string | null;
}

/** A client's credits as the status page shows them (named by name, never by id). */
export interface ClientCreditFacts extends Omit<ClientCredits, 'clientId'> {
  /** Available credits below credits.lowThreshold (never for an unlimited client; false when no threshold is set). */
  low: boolean;
}

export interface CreditFacts {
  /** credits.lowThreshold; null: not set, no client is marked low. */
  lowThreshold: number | null;
  /** Every client, by name. */
  clients: ClientCreditFacts[];
}

/** One customer session of the SMPP server, on any node of the cluster. */
export interface SmppSessionFacts extends Omit<ServerSessionView, 'boundAt'> {
  /** ISO-8601. */
  boundAt: string;
}

/** The SMPP server for customers (config smppServer), as the running gateway knows it. */
export interface SmppServerFacts {
  /** Every bound session of the cluster, by account then bind time; window use and rate for this node's only (null elsewhere). */
  sessions: SmppSessionFacts[];
  /** deliver_sm (receipts, inbound messages) stored and waiting for each account to take them, every account listed. */
  deliveriesWaiting: { systemId: string; waiting: number }[];
}

export interface GatewayFacts {
  version: string;
  startedAt: string;
  uptimeSeconds: number;
}

/** One transport of a route as the status page shows it. */
/** A route and where its parts go now: the engine's routeStatus() (src/engine/route-status.ts). */
export type { RouteStatus } from '../engine/route-status.js';
import type { RouteStatus } from '../engine/route-status.js';

export interface StatusFacts {
  /** 'serve': from the running gateway; 'database': what the database alone tells (serve not answering). */
  source: 'serve' | 'database';
  generatedAt: string;
  /** null when the source is the database (as every other live fact below). */
  gateway: GatewayFacts | null;
  /** What GET /ready answers now. */
  readiness: Readiness | null;
  /** null when the source is the database: only a running serve knows its binds. */
  transports: TransportFacts[] | null;
  queues: QueuedParts[];
  /** In progress first (newest first), then the newest finished ones. */
  campaigns: CampaignFacts[];
  webhooks: { deadLetters: number; clients: WebhookClientFacts[] };
  /** Read from the database, so known whether or not serve answers. */
  credits: CreditFacts;
  /** null when the source is the database. Context names clients (`client`), never by id. */
  recentErrors: RecentError[] | null;
  /**
   * sha256 of the running config's canonical JSON (src/config/config-hash.ts): nodes or reloads
   * showing the same hash run the same settings. null when the source is the database.
   */
  configHash: string | null;
  /** Each route and the transport its parts go to now; null when the source is the database. */
  routes: RouteStatus[] | null;
  /** The SMPP server's sessions and deliveries waiting; null without config smppServer or when the source is the database. */
  smppServer: SmppServerFacts | null;
}

/**
 * Counting a campaign's progress walks its recipients' index entries: about 65 ms for 100,000
 * recipients on this machine kind (bench:admin), on the event loop. When the campaigns in progress
 * hold at least minRecipients, their counts are reused for ttlMs (the page's refresh interval), so
 * several open pages and scrapers cost one count per interval. Smaller ones are counted each load.
 */
export class CampaignProgressCache {
  private cached: { atMs: number; campaigns: CampaignFacts[] } | undefined;

  constructor(
    private readonly ttlMs = 5_000,
    private readonly minRecipients = 10_000,
  ) {}

  async read(status: Async<StatusQueries>, nowMs: number): Promise<CampaignFacts[]> {
    if (this.cached !== undefined && nowMs - this.cached.atMs < this.ttlMs) return this.cached.campaigns;
    const inProgress = await status.campaignsInProgress(MAX_CAMPAIGNS_SHOWN);
    const finished = await status.finishedCampaigns(MAX_FINISHED_CAMPAIGNS_SHOWN);
    const campaigns: CampaignFacts[] = [];
    for (const [c, done] of [...inProgress.map((c) => [c, false] as const), ...finished.map((c) => [c, true] as const)]) {
      campaigns.push(campaignFacts(c, done, c.undelivered === 0 ? [] : await status.undeliveredGroups(c.id)));
    }
    const recipients = campaigns.reduce((sum, c) => sum + c.delivered + c.undelivered + c.pending, 0);
    this.cached = recipients >= this.minRecipients ? { atMs: nowMs, campaigns } : undefined;
    return campaigns;
  }
}

export function campaignFacts({ createdAtMs, ...c }: CampaignProgress, finished: boolean, undelivered: readonly UndeliveredGroup[]): CampaignFacts {
  return { ...c, createdAt: new Date(createdAtMs).toISOString(), finished, outcomes: outcomeBreakdown(c, undelivered) };
}

export interface LiveSources {
  status: Async<StatusQueries>;
  progress: CampaignProgressCache;
  transports: readonly Transport[];
  activity: TransportActivity;
  recentErrors: RecentErrors;
  webhookHealth: WebhookHealth;
  /** smsgate's version (package.json) and when this gateway's admin was built (its start, near enough). */
  version: string;
  startedAtMs: number;
  /** What /ready answers now. */
  readiness(): Promise<Readiness>;
  now: () => number;
  /** credits.lowThreshold; undefined: off. */
  lowCreditsThreshold?: number;
  /** The running config's hash; unknown (null) until the gateway attached its config. */
  configHash?(): string;
  /** The routes and where their parts go now; unknown (null) until attached. */
  routeStatus?(): RouteStatus[];
  /** The SMPP server's status, once the gateway attached one (config smppServer); undefined: none. */
  smppServer?(): SmppServerStatusSource | undefined;
}

/** The SMPP server's facts from its status source. */
export async function smppServerFacts(source: SmppServerStatusSource): Promise<SmppServerFacts> {
  const sessions = await source.sessions();
  const waiting = await source.deliveriesWaiting();
  return {
    sessions: sessions.map(({ boundAt, ...session }) => ({ ...session, boundAt: new Date(boundAt).toISOString() })),
    deliveriesWaiting: [...waiting].map(([systemId, count]) => ({ systemId, waiting: count })).sort((a, b) => a.systemId.localeCompare(b.systemId)),
  };
}

const REGISTERED = new Set(['registered-home', 'registered-roaming']);

export function isRegistered(registration: string): boolean {
  return REGISTERED.has(registration);
}

function iso(ms: number | undefined): string | null {
  return ms === undefined ? null : new Date(ms).toISOString();
}

export function transportFacts(transport: Transport, activity: TransportActivity): TransportFacts {
  const state = transport.currentState();
  const links: LinkFacts[] =
    transport.links?.().map((link) => ({
      name: link.name,
      state: link.state,
      since: iso(link.sinceMs),
      lastError: link.lastError,
      windowUsed: link.windowUsed,
      windowSize: link.windowSize,
      ...(link.radio === undefined ? {} : { modem: { ...link.radio, registered: isRegistered(link.radio.registration) } }),
    })) ?? [];
  const inFlight = activity.partsInFlight(transport.name);
  if (links.length === 0) {
    // A transport without links (the simulator) is shown as one link: its own state and window.
    links.push({
      name: '0',
      state: state.state,
      since: iso(activity.sinceMs(transport.name, state.state)),
      lastError: state.state === 'down' ? state.reason : null,
      windowUsed: Math.min(inFlight, transport.windowSize),
      windowSize: transport.windowSize,
    });
  }
  return {
    name: transport.name,
    type: transport.type,
    state: state.state,
    since: iso(activity.sinceMs(transport.name, state.state)),
    detail: state.state === 'bound' ? (state.detail ?? null) : state.state === 'down' ? state.reason : null,
    maxPerSecond: transport.maxPerSecond,
    ratePerSecond: Math.round(activity.ratePerSecond(transport.name) * 10) / 10,
    maxPerMinute: transport.maxPerSecond * 60,
    ratePerMinute: activity.partsLastMinute(transport.name),
    parts: activity.counts(transport.name),
    lastError: state.state === 'down' ? state.reason : (links.find((l) => l.lastError !== null)?.lastError ?? null),
    windowUsed: links.reduce((sum, link) => sum + link.windowUsed, 0),
    windowSize: links.reduce((sum, link) => sum + link.windowSize, 0),
    links,
  };
}

export async function liveStatusFacts(sources: LiveSources): Promise<StatusFacts> {
  const stored = await storedStatusFacts(sources.status, sources.transports.map((t) => t.name), sources.now, sources.progress, sources.lowCreditsThreshold);
  const names = new Map((await sources.status.clientNames()).map((c) => [c.id, c.name]));
  const nowMs = sources.now();
  const smppServer = sources.smppServer?.();
  return {
    ...stored,
    source: 'serve',
    gateway: { version: sources.version, startedAt: new Date(sources.startedAtMs).toISOString(), uptimeSeconds: Math.max(0, Math.floor((nowMs - sources.startedAtMs) / 1_000)) },
    readiness: await sources.readiness(),
    transports: sources.transports.map((t) => transportFacts(t, sources.activity)),
    webhooks: {
      ...stored.webhooks,
      clients: stored.webhooks.clients.map((c) => {
        const health = sources.webhookHealth.of(c.clientId);
        return { ...c, breaker: health?.breaker ?? null, lastError: health?.lastError ?? null, lastErrorAt: iso(health?.lastErrorAtMs ?? undefined) };
      }),
    },
    recentErrors: sources.recentErrors.list().map((e) => namedClient(e, names)),
    configHash: sources.configHash?.() ?? null,
    routes: sources.routeStatus?.() ?? null,
    smppServer: smppServer === undefined ? null : await smppServerFacts(smppServer),
  };
}

/** A recent error whose context named a client by id names it by name (`client`). */
function namedClient(e: RecentError, names: ReadonlyMap<number, string>): RecentError {
  const id = e.context['clientId'];
  if (id === undefined) return e;
  const { clientId: _id, ...rest } = e.context;
  return { ...e, context: { client: names.get(Number(id)) ?? `#${id} (no such client)`, ...rest } };
}

/** Every client's credits, each marked low against `lowThreshold` (undefined: off). */
export function creditFacts(clients: readonly ClientCredits[], lowThreshold: number | undefined): CreditFacts {
  return {
    lowThreshold: lowThreshold ?? null,
    clients: clients.map(({ clientId: _id, ...c }) => ({ ...c, low: isLow(c, lowThreshold) })),
  };
}

/** `transportNames`: the configured transports, whose queues are counted; `lowCreditsThreshold`: credits.lowThreshold. */
export async function storedStatusFacts(
  status: Async<StatusQueries>,
  transportNames: readonly string[],
  now: () => number = Date.now,
  progress: CampaignProgressCache = new CampaignProgressCache(0),
  lowCreditsThreshold?: number,
): Promise<StatusFacts> {
  const generatedAt = new Date(now()).toISOString();
  const queues = await status.queuedPartsByTransport(transportNames);
  const campaigns = await progress.read(status, now());
  const deadLetters = await status.deadLetterCount();
  const clients = await status.webhooksByClient();
  const credits = creditFacts(await status.clientCredits(), lowCreditsThreshold);
  return {
    source: 'database',
    generatedAt,
    gateway: null,
    readiness: null,
    transports: null,
    queues,
    campaigns,
    webhooks: { deadLetters, clients: clients.map((c) => ({ ...c, breaker: null, lastError: null, lastErrorAt: null })) },
    credits,
    recentErrors: null,
    configHash: null,
    routes: null,
    smppServer: null,
  };
}

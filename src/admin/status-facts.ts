/**
 * The facts behind /status, /status.json and `smsgate status`: transports and their links (SMPP
 * binds, modems), queue depths, campaigns in progress, webhooks per client and recent errors. One
 * function gathers them from a running gateway; storedStatusFacts gives the part the database
 * alone can tell, for `smsgate status` when no serve answers.
 */
import type { Async } from '../store/ports.js';
import type { CampaignProgress, ClientWebhooks, QueuedParts, StatusQueries } from '../store/status-store.js';
import type { ModemRadio, Transport, TransportState } from '../transports/transport.js';
import type { RecentError, RecentErrors } from './recent-errors.js';
import type { TransportActivity } from './transport-activity.js';

/** Campaigns shown at most (newest first). */
export const MAX_CAMPAIGNS_SHOWN = 20;

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
}

export interface StatusFacts {
  /** 'serve': from the running gateway; 'database': what the database alone tells (serve not answering). */
  source: 'serve' | 'database';
  generatedAt: string;
  /** null when the source is the database: only a running serve knows its binds. */
  transports: TransportFacts[] | null;
  queues: QueuedParts[];
  campaigns: CampaignFacts[];
  webhooks: { deadLetters: number; clients: ClientWebhooks[] };
  /** null when the source is the database. */
  recentErrors: RecentError[] | null;
}

/**
 * Counting a campaign's progress walks its recipients' index entries: about 65 ms for 100,000
 * recipients on this machine kind (bench:admin), on the event loop. When the campaigns in progress
 * hold at least minRecipients, their counts are reused for ttlMs (the page's refresh interval), so
 * several open pages and scrapers cost one count per interval. Smaller ones are counted each load.
 */
export class CampaignProgressCache {
  private cached: { atMs: number; campaigns: CampaignProgress[] } | undefined;

  constructor(
    private readonly ttlMs = 5_000,
    private readonly minRecipients = 10_000,
  ) {}

  async read(status: Async<StatusQueries>, nowMs: number): Promise<CampaignProgress[]> {
    if (this.cached !== undefined && nowMs - this.cached.atMs < this.ttlMs) return this.cached.campaigns;
    const campaigns = await status.campaignsInProgress(MAX_CAMPAIGNS_SHOWN);
    const recipients = campaigns.reduce((sum, c) => sum + c.delivered + c.undelivered + c.pending, 0);
    this.cached = recipients >= this.minRecipients ? { atMs: nowMs, campaigns } : undefined;
    return campaigns;
  }
}

export interface LiveSources {
  status: Async<StatusQueries>;
  progress: CampaignProgressCache;
  transports: readonly Transport[];
  activity: TransportActivity;
  recentErrors: RecentErrors;
  now: () => number;
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
    windowUsed: links.reduce((sum, link) => sum + link.windowUsed, 0),
    windowSize: links.reduce((sum, link) => sum + link.windowSize, 0),
    links,
  };
}

export async function liveStatusFacts(sources: LiveSources): Promise<StatusFacts> {
  return {
    ...(await storedStatusFacts(sources.status, sources.transports.map((t) => t.name), sources.now, sources.progress)),
    source: 'serve',
    transports: sources.transports.map((t) => transportFacts(t, sources.activity)),
    recentErrors: sources.recentErrors.list(),
  };
}

/** `transportNames`: the configured transports, whose queues are counted. */
export async function storedStatusFacts(
  status: Async<StatusQueries>,
  transportNames: readonly string[],
  now: () => number = Date.now,
  progress: CampaignProgressCache = new CampaignProgressCache(0),
): Promise<StatusFacts> {
  const generatedAt = new Date(now()).toISOString();
  const queues = await status.queuedPartsByTransport(transportNames);
  const campaigns = await progress.read(status, now());
  const deadLetters = await status.deadLetterCount();
  const clients = await status.webhooksByClient();
  return {
    source: 'database',
    generatedAt,
    transports: null,
    queues,
    campaigns: campaigns.map(({ createdAtMs, ...c }) => ({ ...c, createdAt: new Date(createdAtMs).toISOString() })),
    webhooks: { deadLetters, clients },
    recentErrors: null,
  };
}

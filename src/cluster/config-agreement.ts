/**
 * Whether this node runs an SMPP transport with the same cluster-wide settings as the other nodes
 * (README "Running a cluster": one config for every node). `binds` is the carrier's limit for the
 * whole cluster and `maxPerSecond` its cap, each split over the nodes by the bind slots; a node with
 * other values would open binds beyond the limit or send at a rate of its own, and `window`,
 * host, port and systemId must be the same for the slots to mean the same carrier account.
 *
 * Each node publishes its values in its cluster_nodes row (`settings`, JSON, no password); at every
 * heartbeat it reads the live nodes' rows. The cluster's value of each key is the one most live
 * nodes publish; a tie goes to the value of the oldest live node among those tied (its row's
 * started_at, then its id), so two nodes that disagree keep the one that was there first, and a
 * rolling change flips once most nodes run the new value. A node that differs on any key of a
 * transport logs it once (naming transport, key, both values), is not ready (/ready names it) and
 * holds none of that transport's bind slots until it agrees again; the nodes that agree share the
 * slots among themselves.
 */
import type { Logger } from '../common/log.js';
import type { TransportEntry } from '../transports/registry.js';
import { resolveSmppConfig } from '../transports/smpp/config.js';

/** The keys of an SMPP transport that must be the cluster's, in the order problems are reported. */
export const CLUSTER_SETTING_KEYS = ['binds', 'maxPerSecond', 'window', 'host', 'port', 'systemId'] as const;
export type ClusterSettingKey = (typeof CLUSTER_SETTING_KEYS)[number];

export type TransportClusterSettings = { [K in ClusterSettingKey]: string | number };
/** Per SMPP transport name. */
export type ClusterSettings = Record<string, TransportClusterSettings>;

/** One live node's row as the agreement reads it. */
export interface PublishedSettings {
  nodeId: string;
  startedAt: number;
  /** Null for a row without settings (a node of an older version): left out of the comparison. */
  settings: ClusterSettings | null;
}

export interface SettingDisagreement {
  transport: string;
  key: ClusterSettingKey;
  here: string | number;
  cluster: string | number;
}

/** The cluster-wide settings of the SMPP transports of a config, defaults applied (so an omitted default agrees with it written). */
export function clusterSettingsOf(transports: readonly TransportEntry[]): ClusterSettings {
  const settings: ClusterSettings = {};
  for (const entry of transports) {
    if (entry.type !== 'smpp') continue;
    const resolved = resolveSmppConfig(entry);
    settings[resolved.name] = {
      binds: resolved.binds,
      maxPerSecond: resolved.maxPerSecond,
      window: resolved.window,
      host: resolved.host,
      port: resolved.port,
      systemId: resolved.systemId,
    };
  }
  return settings;
}

/** Reads a published `settings` column; null for a missing or unreadable one. */
export function parsePublishedSettings(text: string | null): ClusterSettings | null {
  if (text === null) return null;
  try {
    const parsed: unknown = JSON.parse(text);
    return typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed) ? (parsed as ClusterSettings) : null;
  } catch {
    return null;
  }
}

/**
 * The cluster's value of one key of one transport: the value most of the nodes publishing that
 * transport have, ties to the oldest node's. Undefined when no node publishes the transport.
 */
export function agreedValue(nodes: readonly PublishedSettings[], transport: string, key: ClusterSettingKey): string | number | undefined {
  const byAge = [...nodes].sort((a, b) => a.startedAt - b.startedAt || (a.nodeId < b.nodeId ? -1 : a.nodeId > b.nodeId ? 1 : 0));
  const counts = new Map<string | number, { votes: number; oldest: number }>();
  byAge.forEach((node, age) => {
    const value = node.settings?.[transport]?.[key];
    if (value === undefined) return;
    const seen = counts.get(value);
    if (seen === undefined) counts.set(value, { votes: 1, oldest: age });
    else seen.votes++;
  });
  let best: { value: string | number; votes: number; oldest: number } | undefined;
  for (const [value, { votes, oldest }] of counts) {
    if (best === undefined || votes > best.votes || (votes === best.votes && oldest < best.oldest)) best = { value, votes, oldest };
  }
  return best?.value;
}

/** Where `own` differs from the cluster's values, transport by transport, key by key. */
export function disagreementsOf(own: ClusterSettings, nodes: readonly PublishedSettings[]): SettingDisagreement[] {
  const found: SettingDisagreement[] = [];
  for (const [transport, here] of Object.entries(own)) {
    for (const key of CLUSTER_SETTING_KEYS) {
      const cluster = agreedValue(nodes, transport, key);
      if (cluster !== undefined && cluster !== here[key]) found.push({ transport, key, here: here[key], cluster });
    }
  }
  return found;
}

/** The readiness reason for one disagreement. */
export function describeDisagreement(d: SettingDisagreement): string {
  return `transport ${d.transport}: ${d.key} differs from the cluster (${String(d.here)} here, ${String(d.cluster)} on the cluster)`;
}

/**
 * This node's standing against the cluster's settings, updated at each heartbeat from the live
 * nodes' rows. Until the first update every transport may bind (nothing is known against it).
 */
export class ConfigAgreement {
  private current: SettingDisagreement[] = [];
  /** Per transport, how many live nodes publish exactly the cluster's values (this one included when it agrees). */
  private agreeing = new Map<string, number>();

  constructor(
    readonly own: ClusterSettings,
    private readonly logger: Logger,
  ) {}

  /** The JSON this node publishes in its row. */
  get published(): string {
    return JSON.stringify(this.own);
  }

  /**
   * Takes the live nodes' published settings (this node's row among them). Each new disagreement
   * is logged once; one that ended is logged as agreed again. True when which transports may bind
   * changed (the slots should be synced now).
   */
  update(nodes: readonly PublishedSettings[]): boolean {
    const before = new Set(this.current.map(keyOf));
    const blockedBefore = this.blockedTransports();
    const next = disagreementsOf(this.own, nodes);
    const after = new Set(next.map(keyOf));
    for (const d of next) {
      if (!before.has(keyOf(d))) {
        this.logger.error({ transport: d.transport, key: d.key, here: d.here, cluster: d.cluster },
          `${describeDisagreement(d)}: this node binds none of its slots until it runs the cluster's value`);
      }
    }
    for (const d of this.current) {
      if (!after.has(keyOf(d))) this.logger.info({ transport: d.transport, key: d.key }, `transport ${d.transport}: ${d.key} agrees with the cluster again`);
    }
    this.current = next;
    this.agreeing = new Map(
      Object.keys(this.own).map((transport) => [transport, nodes.filter((node) => this.agreesOn(node, transport, nodes)).length]),
    );
    const blockedAfter = this.blockedTransports();
    return blockedBefore.size !== blockedAfter.size || [...blockedAfter].some((t) => !blockedBefore.has(t));
  }

  /** Whether this node may hold bind slots of the transport: it runs the cluster's values. */
  mayBind(transport: string): boolean {
    return !this.current.some((d) => d.transport === transport);
  }

  /** Live nodes running the cluster's values of the transport (the ones sharing its slots); undefined before any update. */
  agreeingNodes(transport: string): number | undefined {
    return this.agreeing.get(transport);
  }

  /** The /ready reasons: one per differing key. */
  problems(): string[] {
    return this.current.map(describeDisagreement);
  }

  private blockedTransports(): Set<string> {
    return new Set(this.current.map((d) => d.transport));
  }

  private agreesOn(node: PublishedSettings, transport: string, nodes: readonly PublishedSettings[]): boolean {
    const theirs = node.settings?.[transport];
    if (theirs === undefined) return false;
    return CLUSTER_SETTING_KEYS.every((key) => theirs[key] === agreedValue(nodes, transport, key));
  }
}

function keyOf(d: SettingDisagreement): string {
  return JSON.stringify([d.transport, d.key, d.here, d.cluster]);
}

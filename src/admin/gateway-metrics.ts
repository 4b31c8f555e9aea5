/**
 * The Prometheus metrics of one gateway, on a Registry of its own so that two gateways in one
 * process never share or clash over a metric. Counters and histograms are fed by the
 * GatewayObserver hooks; gauges of state (binds up, windows, queue depth and age, dead letters,
 * readiness, modem radio, clients' available credits) and the transports' link counters are read when scraped (collect), from
 * the transports and the store. Every metric, its labels and what bounds them:
 * docs/behaviour/metrics-and-logs.md.
 */
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { ClusterStats } from './cluster-stats.js';
import { packageVersion } from '../common/package-version.js';
import type { GatewayObserver, PartOutcomeKind, WebhookAttemptResult } from '../gateway-observer.js';
import { MESSAGE_STATE } from '../receipts/index.js';
import type { SmppServerStatusSource } from '../smpp-server/contracts.js';
import type { Async } from '../store/ports.js';
import type { StatusQueries } from '../store/sqlite/status-store.js';
import type { LinkCounters, PartOutcome, Transport, TransportReceipt, TransportState } from '../transports/transport.js';
import { transportFacts, type LinkFacts } from './status-facts.js';
import type { TransportActivity } from './transport-activity.js';

export interface MetricSources {
  status: Pick<Async<StatusQueries>, 'queuedPartsByTransport' | 'deadLetterCount' | 'pendingWebhookCount' | 'oldestDueByTransport' | 'clientCredits'>;
  /** The gateway's transports; read at each scrape (they are built after the metrics). */
  transports(): readonly Transport[];
  activity: TransportActivity;
  /** Whether GET /ready would answer 200 now (smsgate_ready); absent: the gauge is not exposed. */
  ready?(): Promise<boolean>;
  /** Clock of the receipt latency and the queue age; default Date.now. */
  now?: () => number;
}

/**
 * prom-client's default metrics name three gauges `..._total`, which `promtool check metrics`
 * reports ("non-counter metrics should not have _total suffix"). The same figures stay available
 * by type (nodejs_active_handles{type}, nodejs_active_requests{type}, nodejs_active_resources{type}).
 */
const LINT_FAILING_DEFAULTS = ['nodejs_active_handles_total', 'nodejs_active_requests_total', 'nodejs_active_resources_total'];

const WEBHOOK_RESULTS: readonly WebhookAttemptResult[] = ['delivered', 'retry', 'dead'];
/** Receipt statuses kept as label values; any other text is counted as OTHER (carriers' texts are unbounded). */
const RECEIPT_STATUSES = new Set<string>([...Object.keys(MESSAGE_STATE), 'BUFFRED']);

export function receiptStatusLabel(status: string): string {
  const upper = status.trim().toUpperCase();
  return RECEIPT_STATUSES.has(upper) ? upper : 'OTHER';
}

/** The smsgate_part_outcomes_total outcome label (README, Admin listener): a 'not-sent' part counts as failed-temporary. */
export function partOutcomeLabel(outcome: PartOutcome): PartOutcomeKind {
  switch (outcome.kind) {
    case 'accepted':
      return 'accepted';
    case 'permanent':
      return 'failed-permanent';
    case 'temporary':
    case 'not-sent':
      return 'failed-temporary';
  }
}

/**
 * The reason label's value: a coded status only (an SMPP command_status name, CMS_ERROR_<n>, a local
 * code such as RESPONSE_TIMEOUT, a not-sent reason), OK for an accepted part. A status that is not
 * such a code (free text) is OTHER, and past MAX_REASONS_PER_TRANSPORT distinct reasons on one
 * transport new ones are OTHER too, so the series stay bounded whatever a peer answers.
 */
const REASON_CODE = /^[A-Z][A-Z0-9_]{0,39}$/;
export const MAX_REASONS_PER_TRANSPORT = 64;

export function partOutcomeReason(outcome: PartOutcome): string {
  switch (outcome.kind) {
    case 'accepted':
      return 'OK';
    case 'not-sent':
      return outcome.reason;
    case 'temporary':
    case 'permanent':
      return REASON_CODE.test(outcome.status) ? outcome.status : 'OTHER';
  }
}

/**
 * Receipts' latency is measured from the accepted submit to the final receipt, both seen by this
 * process: the submit time is kept per message id until its final receipt, for at most this many
 * parts (the oldest forgotten first), so memory stays bounded when receipts never come.
 */
export const MAX_AWAITED_RECEIPTS = 200_000;
/**
 * A final receipt can be handled before its submit's outcome: the SMSC's submit_sm_resp and its
 * deliver_sm arrive in one read, and the transport hands the receipt on before the engine's await
 * of the submit resumes. Such receipts are remembered (at most this many, the oldest forgotten
 * first) and observed as 0 s when the outcome comes: the receipt came as fast as the response.
 */
export const MAX_EARLY_RECEIPTS = 10_000;
const RECEIPT_LATENCY_BUCKETS = [0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1800, 3600];

/**
 * Counts per label set kept as plain numbers and handed to prom-client when scraped: a labelled
 * Counter.inc hashes its labels on every call (about 1 µs here), and the per-part counters are on
 * the submit and receipt hot paths.
 */
class Tally<L extends string> {
  private readonly counts = new Map<string, { labels: Record<L, string>; value: number }>();

  add(key: string, labels: () => Record<L, string>, n = 1): void {
    const entry = this.counts.get(key);
    if (entry === undefined) this.counts.set(key, { labels: labels(), value: n });
    else entry.value += n;
  }

  /** Sets the counter to every tallied total (they only grow, as a counter must). */
  publish(counter: Counter<L>): void {
    counter.reset();
    for (const { labels, value } of this.counts.values()) counter.inc(labels, value);
  }
}

export class GatewayMetrics implements GatewayObserver {
  readonly registry = new Registry();
  private readonly submitted = new Tally<'transport'>();
  private readonly outcomes = new Tally<'transport' | 'outcome' | 'reason'>();
  /** Distinct reason labels seen per transport (MAX_REASONS_PER_TRANSPORT). */
  private readonly reasonsSeen = new Map<string, Set<string>>();
  private readonly inboundParts = new Tally<'transport'>();
  private readonly inboundMessages = new Tally<'transport'>();
  private readonly inboundIncomplete = new Tally<'transport'>();
  private readonly routeFailovers = new Tally<'route' | 'from' | 'to'>();
  /** `${transport}\u0000${messageId}` -> when its submit was accepted, until its final receipt. */
  private readonly awaitingReceipt = new Map<string, number>();
  /** Final receipts handled before their part's accepted outcome (MAX_EARLY_RECEIPTS). */
  private readonly earlyReceipts = new Set<string>();
  private readonly receiptLatencySeconds: Histogram<'transport'>;
  /** The histogram's child per transport: observing through it skips hashing the labels on each receipt. */
  private readonly latencyByTransport = new Map<string, { observe(seconds: number): void }>();
  private readonly now: () => number;
  private readonly receipts = new Tally<'transport' | 'status'>();
  private readonly webhookDeliveriesTotal: Counter<'result'>;
  private readonly webhookLagSeconds: Histogram;
  private readonly httpRequestDurationSeconds: Histogram<'route' | 'method' | 'status'>;
  private readonly dbCommitSeconds: Histogram;

  constructor(private readonly sources: MetricSources) {
    const registers = [this.registry];
    this.now = sources.now ?? Date.now;
    collectDefaultMetrics({ register: this.registry });
    for (const name of LINT_FAILING_DEFAULTS) this.registry.removeSingleMetric(name);

    const submittedTotal: Counter<'transport'> = new Counter({
      name: 'smsgate_parts_submitted_total',
      help: 'Message parts handed to a transport for submission.',
      labelNames: ['transport'],
      registers,
      collect: (): void => this.submitted.publish(submittedTotal),
    });
    const outcomesTotal: Counter<'transport' | 'outcome' | 'reason'> = new Counter({
      name: 'smsgate_part_outcomes_total',
      help: 'Submit outcomes of message parts: accepted, failed-permanent, failed-temporary; reason is the coded status (OK, ESME_RTHROTTLED, CMS_ERROR_500, RESPONSE_TIMEOUT, TRANSPORT_DOWN...) or OTHER.',
      labelNames: ['transport', 'outcome', 'reason'],
      registers,
      collect: (): void => this.outcomes.publish(outcomesTotal),
    });
    const receiptsTotal: Counter<'transport' | 'status'> = new Counter({
      name: 'smsgate_receipts_total',
      help: 'Delivery receipts received from a transport, by status (DELIVRD, UNDELIV, ..., OTHER).',
      labelNames: ['transport', 'status'],
      registers,
      collect: (): void => this.receipts.publish(receiptsTotal),
    });
    this.receiptLatencySeconds = new Histogram({
      name: 'smsgate_receipt_latency_seconds',
      help: 'Time from a part\'s accepted submit to its final delivery receipt, both seen by this process.',
      labelNames: ['transport'],
      buckets: RECEIPT_LATENCY_BUCKETS,
      registers,
    });
    const tallied = (name: string, help: string, tally: Tally<'transport'>): void => {
      const counter: Counter<'transport'> = new Counter({ name, help, labelNames: ['transport'], registers, collect: (): void => tally.publish(counter) });
    };
    tallied('smsgate_inbound_messages_total', 'Inbound (mobile-originated) messages stored whole: single PDUs, reassembled ones, and incomplete ones delivered after the reassembly timeout.', this.inboundMessages);
    tallied('smsgate_inbound_parts_total', 'Inbound PDUs stored that are one part of a concatenated message (repeats not counted).', this.inboundParts);
    tallied('smsgate_inbound_incomplete_total', 'Inbound messages delivered incomplete: parts still missing at the reassembly timeout.', this.inboundIncomplete);
    const failoversTotal: Counter<'route' | 'from' | 'to'> = new Counter({
      name: 'smsgate_route_failovers_total',
      help: 'Queued parts a route moved from one of its transports to another (route: its name, else its prefix): failover off a transport down longer than failoverAfterMs, moving back once it is up, or a replaced route.',
      labelNames: ['route', 'from', 'to'],
      registers,
      collect: (): void => this.routeFailovers.publish(failoversTotal),
    });
    const version = new Gauge({ name: 'smsgate_build_info', help: 'Always 1; its labels name the smsgate version and the Node.js version running it.', labelNames: ['version', 'node_version'], registers });
    version.set({ version: safeVersion(), node_version: process.version }, 1);
    const linkCounter = (name: string, help: string, value: (counts: LinkCounters, set: (n: number, labels?: Record<string, string>) => void) => void, extraLabel?: 'reason'): void => {
      const counter: Counter<string> = new Counter({
        name,
        help,
        labelNames: extraLabel === undefined ? ['transport'] : ['transport', extraLabel],
        registers,
        collect: (): void => {
          counter.reset();
          for (const transport of sources.transports()) {
            const counts = transport.linkCounters?.();
            if (counts === undefined) continue;
            value(counts, (n, labels = {}) => counter.inc({ transport: transport.name, ...labels }, n));
          }
        },
      });
    };
    linkCounter('smsgate_bind_attempts_total', 'SMPP bind attempts (a transmitter-receiver pair counts once).', (c, set) => set(c.bindAttempts));
    linkCounter('smsgate_bind_failures_total', 'SMPP bind attempts that failed, by coded reason: SMPP_CONNECT_FAILED, SMPP_BIND_REFUSED, SMPP_BIND_TIMEOUT or OTHER.', (c, set) => {
      for (const [reason, n] of c.bindFailures) set(n, { reason });
    }, 'reason');
    linkCounter('smsgate_bind_reconnects_total', 'SMPP sessions lost after they were bound; each is followed by a reconnect (unless stopping).', (c, set) => set(c.sessionsLost));
    this.webhookDeliveriesTotal = new Counter({ name: 'smsgate_webhook_deliveries_total', help: 'Webhook attempts by result: delivered (2xx), retry scheduled, dead letter.', labelNames: ['result'], registers });
    this.webhookLagSeconds = new Histogram({
      name: 'smsgate_webhook_lag_seconds',
      help: 'Time from a receipt being stored to its webhook answered with 2xx.',
      buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900],
      registers,
    });
    this.httpRequestDurationSeconds = new Histogram({
      name: 'smsgate_http_request_duration_seconds',
      help: 'API request duration by route pattern, method and status.',
      labelNames: ['route', 'method', 'status'],
      buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers,
    });
    this.dbCommitSeconds = new Histogram({
      name: 'smsgate_db_commit_seconds',
      help: 'Duration of the engine\'s group commits (submit outcomes and receipts), transaction start to commit.',
      buckets: [0.0005, 0.001, 0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1],
      registers,
    });
    for (const result of WEBHOOK_RESULTS) this.webhookDeliveriesTotal.inc({ result }, 0);

    const up: Gauge<'transport' | 'bind'> = new Gauge({
      name: 'smsgate_transport_up',
      help: '1 when the transport link (SMPP bind, modem) is bound, else 0.',
      labelNames: ['transport', 'bind'],
      registers,
      collect: (): void => this.collectLinks(up, (link) => (link.state === 'bound' ? 1 : 0)),
    });
    const window: Gauge<'transport' | 'bind'> = new Gauge({
      name: 'smsgate_transport_window_used',
      help: 'Submits awaiting their response on the link.',
      labelNames: ['transport', 'bind'],
      registers,
      collect: (): void => this.collectLinks(window, (link) => link.windowUsed),
    });
    const queue = new Gauge({
      name: 'smsgate_queue_parts',
      help: 'Message parts queued for the transport and not yet answered: waiting in the store or in the engine\'s queue, or submitted awaiting the response.',
      labelNames: ['transport'],
      registers,
      // prom-client awaits an async collect before it renders the scrape.
      collect: async () => {
        const rows = await sources.status.queuedPartsByTransport(sources.transports().map((t) => t.name));
        queue.reset();
        for (const row of rows) queue.set({ transport: row.transport }, row.queued + row.submitting);
      },
    });
    const queueAge = new Gauge({
      name: 'smsgate_queue_oldest_age_seconds',
      help: 'How long the transport\'s oldest due part has waited to be sent (0 when none is due); parts waiting for a later retry do not count.',
      labelNames: ['transport'],
      registers,
      collect: async () => {
        const nowMs = this.now();
        const rows = await sources.status.oldestDueByTransport(sources.transports().map((t) => t.name), nowMs);
        queueAge.reset();
        for (const row of rows) queueAge.set({ transport: row.transport }, row.oldestDueAtMs === null ? 0 : Math.max(0, nowMs - row.oldestDueAtMs) / 1_000);
      },
    });
    const ready = sources.ready;
    if (ready !== undefined) {
      const readyGauge: Gauge = new Gauge({
        name: 'smsgate_ready',
        help: '1 when GET /ready would answer 200 (database writable, a transport up, cluster membership live), else 0.',
        registers,
        collect: async (): Promise<void> => readyGauge.set((await ready()) ? 1 : 0),
      });
    }
    const pending: Gauge = new Gauge({
      name: 'smsgate_webhook_pending',
      help: 'Webhook events waiting for their first attempt or a retry.',
      registers,
      collect: async (): Promise<void> => pending.set(await sources.status.pendingWebhookCount()),
    });
    const dead: Gauge = new Gauge({
      name: 'smsgate_webhook_dead_letters',
      help: 'Webhook events that exhausted their retries, waiting for a replay.',
      registers,
      collect: async (): Promise<void> => dead.set(await sources.status.deadLetterCount()),
    });
    // Labelled by the client's name (operators' names, bounded by the clients table); an unlimited
    // client has no balance to show and so no series.
    const creditsAvailable = new Gauge({
      name: 'smsgate_client_credits_available',
      help: 'A client\'s available credits (balance minus reserved), for each client with a balance; an unlimited client has no series.',
      labelNames: ['client'],
      registers,
      collect: async () => {
        const clients = await sources.status.clientCredits();
        creditsAvailable.reset();
        for (const c of clients) if (!c.unlimited) creditsAvailable.set({ client: c.client }, c.available);
      },
    });
    const signal = new Gauge({ name: 'smsgate_modem_signal_dbm', help: 'Modem signal strength (TS 27.007 +CSQ as dBm), when known.', labelNames: ['device'], registers });
    const registered = new Gauge({
      name: 'smsgate_modem_registered',
      help: '1 when the modem is registered on a network (home or roaming), else 0.',
      labelNames: ['device'],
      registers,
      collect: () => {
        signal.reset();
        registered.reset();
        for (const transport of sources.transports()) {
          for (const link of transport.links?.() ?? []) {
            if (link.radio === undefined) continue;
            if (link.radio.signalDbm !== null) signal.set({ device: link.name }, link.radio.signalDbm);
            registered.set({ device: link.name }, /^registered-/.test(link.radio.registration) ? 1 : 0);
          }
        }
      },
    });
  }

  /**
   * A node of a cluster on PostgreSQL: its membership and takeovers, read from the
   * runtime's counters when scraped. Called once, when the gateway is a cluster node.
   */
  watchCluster(stats: () => ClusterStats): void {
    const registers = [this.registry];
    const gauge = (name: string, help: string, value: (s: ClusterStats) => number): void => {
      const metric: Gauge = new Gauge({ name, help, registers, collect: (): void => metric.set(value(stats())) });
    };
    const counter = (name: string, help: string, value: (s: ClusterStats) => number): void => {
      const metric: Counter = new Counter({ name, help, registers, collect: (): void => { metric.reset(); metric.inc(value(stats())); } });
    };
    gauge('smsgate_cluster_live_nodes', 'Nodes of the cluster whose lease has not run out, this one included, at its last heartbeat.', (s) => s.liveNodes);
    gauge('smsgate_cluster_slot_session_up', '1 while this node\'s bind slot session to PostgreSQL is open (its SMPP binds may run), else 0.', (s) => (s.slotSessionOpen ? 1 : 0));
    counter('smsgate_cluster_heartbeats_total', 'Heartbeats of this node that reached the database.', (s) => s.beats);
    counter('smsgate_cluster_heartbeat_failures_total', 'Heartbeats of this node the database did not answer.', (s) => s.failedBeats);
    counter('smsgate_cluster_rejoins_total', 'Times this node found itself fenced out (its lease had run out) and rejoined under a new id.', (s) => s.rejoins);
    counter('smsgate_cluster_nodes_taken_over_total', 'Expired nodes whose work this node took over.', (s) => s.nodesTakenOver);
    counter('smsgate_cluster_rows_requeued_total', 'Parts, outbox leases and campaigns this node moved back to the queues from expired nodes.', (s) => s.rowsRequeued);
  }

  /**
   * The SMPP server for customers (config smppServer): this node's sessions and its submit_sm
   * answers per account, and the deliveries waiting per account, read when scraped. Labelled by
   * the account's system_id (bounded by the smpp_accounts table) and, for submits, by the
   * command_status name answered (bounded by SMPP 3.4 §5.1.3). Called once, when the server runs.
   */
  watchSmppServer(source: SmppServerStatusSource): void {
    const registers = [this.registry];
    // One read of the waiting rows per scrape feeds both gauges: every account has a series.
    let waiting: Promise<ReadonlyMap<string, number>> | undefined;
    const waitingOnce = (): Promise<ReadonlyMap<string, number>> => {
      waiting ??= source.deliveriesWaiting().finally(() => {
        waiting = undefined;
      });
      return waiting;
    };
    const sessions = new Gauge({
      name: 'smsgate_smpp_server_sessions',
      help: 'Customer sessions bound to this node\'s SMPP server, by account system_id (0 for an account with none).',
      labelNames: ['account'],
      registers,
      collect: async () => {
        const [views, accounts] = await Promise.all([source.sessions(), waitingOnce()]);
        const counts = new Map([...accounts.keys()].map((account) => [account, 0]));
        // This node's sessions are those it knows the window of (ServerSessionView.windowInUse).
        for (const view of views) if (view.windowInUse !== null) counts.set(view.systemId, (counts.get(view.systemId) ?? 0) + 1);
        sessions.reset();
        for (const [account, n] of counts) sessions.set({ account }, n);
      },
    });
    const submits: Counter<'account' | 'status'> = new Counter({
      name: 'smsgate_smpp_server_submits_total',
      help: 'submit_sm this node\'s SMPP server answered, by account system_id and the submit_sm_resp command_status name (ESME_ROK when accepted).',
      labelNames: ['account', 'status'],
      registers,
      collect: (): void => {
        submits.reset();
        for (const count of source.submitCounts()) submits.inc({ account: count.systemId, status: count.status }, count.count);
      },
    });
    const receiptsWaiting = new Gauge({
      name: 'smsgate_smpp_server_receipts_waiting',
      help: 'deliver_sm (receipts and inbound messages) stored for an account and waiting for it to bind and take them, across the cluster.',
      labelNames: ['account'],
      registers,
      collect: async () => {
        const accounts = await waitingOnce();
        receiptsWaiting.reset();
        for (const [account, n] of accounts) receiptsWaiting.set({ account }, n);
      },
    });
  }

  /** Zero series for each transport from the start, so a rate() over the first scrapes is defined. */
  zeroSeriesFor(transportNames: readonly string[]): void {
    for (const transport of transportNames) {
      this.submitted.add(transport, () => ({ transport }), 0);
      this.outcomes.add(`${transport}\u0000accepted\u0000OK`, () => ({ transport, outcome: 'accepted', reason: 'OK' }), 0);
      for (const tally of [this.inboundMessages, this.inboundParts, this.inboundIncomplete]) tally.add(transport, () => ({ transport }), 0);
      this.receiptLatencySeconds.zero({ transport });
    }
  }

  /** Prometheus text exposition of every metric. */
  metrics(): Promise<string> {
    return this.registry.metrics();
  }

  get contentType(): string {
    return this.registry.contentType;
  }

  private collectLinks(gauge: Gauge<'transport' | 'bind'>, value: (link: LinkFacts) => number): void {
    gauge.reset();
    for (const transport of this.sources.transports()) {
      for (const link of transportFacts(transport, this.sources.activity).links) gauge.set({ transport: transport.name, bind: link.name }, value(link));
    }
  }

  partsSubmitted(transport: string, parts: number): void {
    this.submitted.add(transport, () => ({ transport }), parts);
    this.sources.activity.submitted(transport, parts);
  }

  partOutcome(transport: string, outcome: PartOutcome): void {
    const label = partOutcomeLabel(outcome);
    const reason = this.boundedReason(transport, partOutcomeReason(outcome));
    this.outcomes.add(`${transport}\u0000${label}\u0000${reason}`, () => ({ transport, outcome: label, reason }));
    this.sources.activity.finished(transport);
    if (outcome.kind === 'accepted') {
      const key = `${transport}\u0000${outcome.messageId}`;
      if (this.earlyReceipts.delete(key)) {
        this.latencyOf(transport).observe(0);
        return;
      }
      if (this.awaitingReceipt.size >= MAX_AWAITED_RECEIPTS) {
        const oldest = this.awaitingReceipt.keys().next();
        if (oldest.done !== true) this.awaitingReceipt.delete(oldest.value);
      }
      this.awaitingReceipt.set(key, this.now());
    }
  }

  receiptReceived(transport: string, receipt: TransportReceipt): void {
    const label = receiptStatusLabel(receipt.status);
    this.receipts.add(`${transport}\u0000${label}`, () => ({ transport, status: label }));
    if (!receipt.final) return;
    const key = `${transport}\u0000${receipt.messageId}`;
    const submittedAtMs = this.awaitingReceipt.get(key);
    if (submittedAtMs === undefined) {
      if (this.earlyReceipts.size >= MAX_EARLY_RECEIPTS) {
        const oldest = this.earlyReceipts.values().next();
        if (oldest.done !== true) this.earlyReceipts.delete(oldest.value);
      }
      this.earlyReceipts.add(key);
      return;
    }
    this.awaitingReceipt.delete(key);
    this.latencyOf(transport).observe(Math.max(0, this.now() - submittedAtMs) / 1_000);
  }

  inboundPart(transport: string): void {
    this.inboundParts.add(transport, () => ({ transport }));
  }

  inboundMessage(transport: string, incomplete: boolean): void {
    this.inboundMessages.add(transport, () => ({ transport }));
    if (incomplete) this.inboundIncomplete.add(transport, () => ({ transport }));
  }

  private latencyOf(transport: string): { observe(seconds: number): void } {
    let child = this.latencyByTransport.get(transport);
    if (child === undefined) {
      child = this.receiptLatencySeconds.labels({ transport });
      this.latencyByTransport.set(transport, child);
    }
    return child;
  }

  /** The reason as given while the transport has fewer than MAX_REASONS_PER_TRANSPORT distinct ones, else OTHER. */
  private boundedReason(transport: string, reason: string): string {
    let seen = this.reasonsSeen.get(transport);
    if (seen === undefined) {
      seen = new Set();
      this.reasonsSeen.set(transport, seen);
    }
    if (seen.has(reason)) return reason;
    if (seen.size >= MAX_REASONS_PER_TRANSPORT) return 'OTHER';
    seen.add(reason);
    return reason;
  }

  webhookAttempt(result: WebhookAttemptResult, lagMs?: number): void {
    this.webhookDeliveriesTotal.inc({ result });
    if (lagMs !== undefined) this.webhookLagSeconds.observe(Math.max(0, lagMs) / 1_000);
  }

  dbCommit(seconds: number): void {
    this.dbCommitSeconds.observe(seconds);
  }

  httpRequest(route: string, method: string, status: number, seconds: number): void {
    this.httpRequestDurationSeconds.observe({ route, method, status: String(status) }, seconds);
  }

  routeFailover(route: string, from: string, to: string, parts: number): void {
    this.routeFailovers.add(`${route}\u0000${from}\u0000${to}`, () => ({ route, from, to }), parts);
  }

  transportState(transport: string, state: TransportState, atMs: number): void {
    this.sources.activity.stateChanged(transport, state.state, atMs);
  }
}

/** The package's version, or 'unknown' when its package.json cannot be found (an embedder's bundle). */
function safeVersion(): string {
  try {
    return packageVersion();
  } catch {
    return 'unknown';
  }
}

/**
 * The cluster runtime of a node on PostgreSQL: the registry row, the bind slot lock
 * session and the LISTEN session, each on the database the config names. Heartbeats and reaps run
 * on a small pool of their own: on the node's pool they would queue behind the engine's units when
 * it is busy, and a heartbeat late by a lease fences a healthy node out. The slot locks and the
 * listener have a connection each, because advisory session locks and LISTEN belong to one session
 * (src/store/postgres/bind-slots.ts, src/store/postgres/wakeups.ts).
 */
import pg from 'pg';
import type { Logger } from '../common/log.js';
import { BindSlotLocks } from '../store/postgres/bind-slots.js';
import { NodeRegistry } from '../store/postgres/node-registry.js';
import { requeueExpiredNodes } from '../store/postgres/node-takeover.js';
import { MIN_POOL_SIZE, pgPoolConfig } from '../store/postgres/pool.js';
import { PgWakeups, type WakeChannel } from '../store/postgres/wakeups.js';
import { ClusterRuntime, type ClusterWakeTargets } from './cluster-runtime.js';
import { ConfigAgreement, type ClusterSettings } from './config-agreement.js';

export interface PgClusterOptions {
  /** The database's URL, for the membership pool and the slot lock and LISTEN sessions. */
  url: string;
  /** Recorded in the node's row, for operators looking at cluster_nodes. */
  apiPort: number | null;
  wake: ClusterWakeTargets;
  logger: Logger;
  /** The node's cluster-wide SMPP settings (clusterSettingsOf), published and compared with the other nodes'. */
  settings?: ClusterSettings;
  heartbeatMs?: number;
  leaseMs?: number;
}

/** Joins the cluster now (a row with a fresh id and a lease); start() the runtime to keep it. */
export async function joinPgCluster(options: PgClusterOptions): Promise<ClusterRuntime> {
  const logger = options.logger.child({ part: 'cluster' });
  const pool = new pg.Pool(pgPoolConfig(options.url, MIN_POOL_SIZE));
  // An idle connection the server drops is reported here; unheard it would end the process. The
  // next beat fails and is logged (FailureLog), so nothing more is said here.
  pool.on('error', () => undefined);
  const agreement = options.settings === undefined ? undefined : new ConfigAgreement(options.settings, logger);
  let registry: NodeRegistry;
  try {
    registry = await NodeRegistry.join(pool, {
      apiPort: options.apiPort,
      ...(agreement === undefined ? {} : { settings: agreement.published }),
      ...(options.leaseMs === undefined ? {} : { leaseMs: options.leaseMs }),
    });
  } catch (err) {
    await pool.end();
    throw err;
  }
  return new ClusterRuntime({
    close: () => pool.end(),
    registry,
    reapHooks: [requeueExpiredNodes],
    connectSlots: (slotOptions) => BindSlotLocks.connect(options.url, slotOptions),
    listen: (targets) => PgWakeups.start({
      url: options.url,
      channels: ['smsgate_parts', 'smsgate_outbox', 'smsgate_campaigns'],
      onWake: (channel: WakeChannel) => wakeFor(targets, channel),
      onListening: (listening) => {
        if (!listening) logger.warn('the wake-up listener lost its connection: polling until it is back');
        else logger.debug('listening for wake-ups');
      },
    }),
    wake: options.wake,
    logger,
    ...(agreement === undefined ? {} : { agreement }),
    ...(options.heartbeatMs === undefined ? {} : { heartbeatMs: options.heartbeatMs }),
    ...(options.leaseMs === undefined ? {} : { leaseMs: options.leaseMs }),
  });
}

function wakeFor(targets: ClusterWakeTargets, channel: WakeChannel): void {
  switch (channel) {
    case 'smsgate_parts':
      targets.parts();
      return;
    case 'smsgate_outbox':
      targets.outbox();
      return;
    case 'smsgate_campaigns':
      targets.campaigns();
      return;
  }
}

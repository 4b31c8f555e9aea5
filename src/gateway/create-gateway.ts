/**
 * The one place a gateway is wired, for either backend: the backend the config selects
 * (./backends.ts) opens the database and gives its ports, secret box, engine store, webhook sender
 * and, on PostgreSQL, the node's cluster runtime; everything else (admin listener, auth,
 * transports, the loops, the API) is built here the same way for both. `smsgate serve` is this plus
 * signal handling.
 */
import { LowCreditsWatch } from '../admin/low-credits-watch.js';
import { createAdminListener } from '../admin/admin-listener.js';
import { AuthService } from '../auth/index.js';
import type { CampaignProcessor } from '../campaigns/index.js';
import { silentLogger } from '../common/log.js';
import { resolveEngineConfig } from '../engine/config.js';
import type { DispatchEngine } from '../engine/dispatch-engine.js';
import { createTransports } from '../engine/transport-factory.js';
import type { BackendRuntime } from './backend.js';
import { backendFor } from './backends.js';
import { loadConfig, type SmsGateConfig } from './config.js';
import { ConfigReloader } from './config-reload.js';
import { buildGatewayLoops } from './loops.js';
import { RunningGateway, type Gateway, type GatewayOptions } from './running-gateway.js';
import { GatewayError } from '../common/errors.js';
import { SINGLE_GATEWAY } from '../common/node-id.js';
import { smppServerTlsProblem } from './config.js';
import type { SmppServerHook } from './smpp-server-hook.js';
import { buildSmppServer } from './smpp-server-factory.js';

/**
 * Builds a gateway. Async because opening the store applies pending migrations, auth loads (or
 * makes) its signing key and a node on PostgreSQL joins its cluster; nothing listens and nothing is
 * sent until start().
 */
export async function createGateway(config: SmsGateConfig, options: GatewayOptions = {}): Promise<Gateway> {
  const logger = options.logger ?? silentLogger();
  const now = options.now ?? Date.now;
  // Its TLS files are read at start: refused before the database is opened, naming the key.
  const tlsProblem = smppServerTlsProblem(config);
  if (tlsProblem !== null) throw new GatewayError('CONFIG_INVALID', `${options.configFile ?? 'config'}: ${tlsProblem.key}: ${tlsProblem.what}`, { details: { path: tlsProblem.key } });
  // A customer's receipt waits for its bind as long as the SMPP server keeps it (smppServer.receiptRetentionHours).
  const engineConfig = {
    ...resolveEngineConfig(config.engine),
    ...(config.smppServer === undefined ? {} : { receiptRetentionHours: config.smppServer.receiptRetentionHours }),
  };
  const opened = await backendFor(config.database).openGateway(config, { now, logger });
  let runtime: BackendRuntime | undefined;
  try {
    const { ports, secretBox } = opened;
    // Metrics and the status page's recent errors see the engine, transports and webhooks.
    const lowCreditsThreshold = config.credits.lowThreshold;
    const admin =
      config.admin === undefined
        ? undefined
        : createAdminListener({ config: config.admin, ports, logger: logger.child({ part: 'admin' }), now, ...(lowCreditsThreshold === undefined ? {} : { lowCreditsThreshold }) });
    const observed = admin?.tapLogger(logger) ?? logger;
    const lowCredits =
      lowCreditsThreshold === undefined ? undefined : new LowCreditsWatch({ status: ports.status, threshold: lowCreditsThreshold, logger: observed.child({ part: 'credits' }), now });
    // The loops exist only after the backend's runtime (a node's id and slot gate); its wake-ups reach them once built.
    const loops: { engine?: DispatchEngine; webhooks?: { wake(): void }; processor?: CampaignProcessor; smppServer?: SmppServerHook } = {};
    const backend = await opened.attach({
      config,
      observed,
      now,
      clockInjected: options.now !== undefined,
      observer: admin?.observer,
      wake: { parts: () => loops.engine?.wake(), outbox: () => loops.webhooks?.wake(), campaigns: () => loops.processor?.wake() },
    });
    runtime = backend;
    loops.webhooks = backend.webhooks;
    const auth = await AuthService.create(ports.auth, config.auth, secretBox, { now, logger: logger.child({ part: 'auth' }) });
    // Transports given by the caller get no bind slot gate (GatewayOptions.transports says so).
    const transports =
      options.transports ?? (await createTransports(config.transports, observed, backend.slotGate === undefined ? {} : { slotGate: backend.slotGate }));
    const { engine, processor, campaigns, app } = buildGatewayLoops({
      config,
      engineConfig,
      ports,
      auth,
      engineStore: backend.engineStore,
      transports,
      webhooks: backend.webhooks,
      smppDeliveries: { wake: () => loops.smppServer?.wakeDeliveries() },
      logger,
      observed,
      now,
      admin,
      ...(backend.node === undefined ? {} : { node: backend.node }),
      ...(backend.cluster === undefined ? {} : { cluster: backend.cluster }),
    });
    loops.engine = engine;
    loops.processor = processor;
    const reloader = new ConfigReloader({
      file: options.configFile ?? null,
      config,
      load: (file) => loadConfig(file),
      engine,
      // A cluster node's SMPP binds are slots shared with its peers (bind-slot-keeper) and its
      // settings are published for agreement: its transports change by a rolling restart.
      build:
        options.transports !== undefined
          ? { fixed: 'the transports were given by the embedding program' }
          : backend.cluster !== undefined
            ? { fixed: 'a cluster node changes transports by a restart' }
            : (entries) => createTransports(entries, observed),
      applied: (running, current) => admin?.replaceTransports(current, running.routes),
      logger: logger.child({ part: 'config' }),
    });
    let smppServer: SmppServerHook | undefined;
    const smppServerConfig = config.smppServer;
    if (smppServerConfig !== undefined) {
      smppServer = await (options.smppServerFactory ?? buildSmppServer)({
        config: { ...config, smppServer: smppServerConfig },
        runningConfig: () => reloader.config,
        ports,
        engineStore: backend.engineStore,
        node: backend.node ?? SINGLE_GATEWAY,
        cluster: backend.cluster,
        engine,
        webhooks: backend.webhooks,
        logger: observed.child({ part: 'smpp-server' }),
        now,
      });
      loops.smppServer = smppServer;
      admin?.attachSmppServer(smppServer.status);
    }
    admin?.attachConfig({
      configHash: () => reloader.configHash,
      routeStatus: () => engine.routeStatus(),
      reload: () => reloader.reload(),
    });
    return new RunningGateway({ app, backend, ports, engine, campaigns, auth, transports, processor, webhooks: backend.webhooks, config, logger, engineConfig, admin, lowCredits, reloader, smppServer });
  } catch (err) {
    await (runtime ?? opened).close();
    throw err;
  }
}

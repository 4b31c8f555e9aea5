/**
 * Reloading the config of a running gateway (SIGHUP to `smsgate serve`, POST /reload on the
 * admin listener, `smsgate config reload`; docs/behaviour/reload.md). The file is read and
 * validated as `serve` and `config check` read it; a file that does not validate is refused whole
 * and the running config stays. A valid one applies what can change while running:
 * - routes, for every recipient not yet turned into parts (engine.replaceRoutes);
 * - transports, by diffTransports: unchanged ones keep running untouched (binds, sessions,
 *   windows), new ones start, changed ones drain and start again with their new settings, removed
 *   ones drain and stop (their queued parts stay queued).
 * Every other section needs a restart: it is logged by key and keeps its running value.
 * Reloads run one at a time, in the order asked.
 */
import { configHash } from '../config/config-hash.js';
import type { ReloadOutcome } from '../config/reload-outcome.js';
import { GatewayError, isGatewayError } from '../common/errors.js';
import type { Logger } from '../common/log.js';
import type { DispatchEngine } from '../engine/dispatch-engine.js';
import type { Transport } from '../transports/transport.js';
import type { SmsGateConfig, TransportEntry } from './config.js';
import { changesTransports, diffTransports, restartOnlyChanges } from './config-diff.js';

export interface ConfigReloaderDeps {
  /** The file the gateway was started from; null for a config given as an object (embedding). */
  file: string | null;
  config: SmsGateConfig;
  /** Reads and validates the file as serve does (loadConfig); throws CONFIG_INVALID naming file and key. */
  load(file: string): SmsGateConfig;
  engine: Pick<DispatchEngine, 'addTransport' | 'replaceTransport' | 'removeTransport' | 'replaceRoutes' | 'currentTransports'>;
  /**
   * Builds transports from entries; undefined when the transports cannot change while running,
   * with the reason (transports given by an embedder, a cluster node's slot-shared binds).
   */
  build: ((entries: readonly TransportEntry[]) => Promise<Transport[]>) | { fixed: string };
  /** Told the running transports and routes after each applied reload (status page, metrics, /ready). */
  applied(config: SmsGateConfig, transports: readonly Transport[]): void;
  logger: Logger;
}

export class ConfigReloader {
  private running: SmsGateConfig;
  private hash: string;
  private queue: Promise<unknown> = Promise.resolve();
  private closed = false;

  constructor(private readonly deps: ConfigReloaderDeps) {
    this.running = deps.config;
    this.hash = configHash(deps.config);
  }

  /** The config running now: the start's, with each applied reload's routes and transports. */
  get config(): SmsGateConfig {
    return this.running;
  }

  /** configHash of the running config. */
  get configHash(): string {
    return this.hash;
  }

  /** Re-reads the file (or takes `next`, already resolved) and applies it; one reload at a time. */
  reload(next?: SmsGateConfig): Promise<ReloadOutcome> {
    const run = this.queue.then(() => this.reloadOnce(next));
    this.queue = run.catch(() => undefined);
    return run;
  }

  /** The gateway stops: a reload in progress finishes (a transport draining), none starts after it. */
  async close(): Promise<void> {
    this.closed = true;
    await this.queue;
  }

  private async reloadOnce(given: SmsGateConfig | undefined): Promise<ReloadOutcome> {
    const { file, logger } = this.deps;
    let next: SmsGateConfig;
    try {
      if (this.closed) throw new GatewayError('CONFIG_INVALID', 'the gateway is stopping: the config is not reloaded');
      if (given !== undefined) next = given;
      else if (file === null) throw new GatewayError('CONFIG_INVALID', 'this gateway was built from a config object, not a file: there is no file to reload');
      else next = this.deps.load(file);
    } catch (err) {
      if (!isGatewayError(err)) throw err;
      return this.refused(err);
    }
    const transports = diffTransports(this.running.transports, next.transports);
    const restartNeeded = restartOnlyChanges(this.running, next);
    const { build } = this.deps;
    if (changesTransports(transports) && typeof build !== 'function') {
      return this.refused(new GatewayError('CONFIG_INVALID', `${file ?? 'config'}: transports: ${describeChanges(transports)} cannot change while running here (${build.fixed}): restart to apply it`, { details: { path: 'transports' } }));
    }
    let started: Map<string, Transport>;
    try {
      const entries = next.transports.filter((t) => transports.added.includes(t.name) || transports.changed.includes(t.name));
      started = new Map((typeof build === 'function' && entries.length > 0 ? await build(entries) : []).map((t) => [t.name, t]));
    } catch (err) {
      if (!isGatewayError(err)) throw err;
      return this.refused(err);
    }
    const { engine } = this.deps;
    // New transports first and routes next, so no route names a transport that is not running;
    // removed ones last, once no route sends new parts their way.
    for (const name of transports.added) await engine.addTransport(started.get(name) as Transport);
    engine.replaceRoutes(next.routes);
    for (const name of transports.changed) await engine.replaceTransport(started.get(name) as Transport);
    for (const name of transports.removed) await engine.removeTransport(name);
    this.running = { ...this.running, routes: next.routes, transports: next.transports };
    this.hash = configHash(this.running);
    const order = new Map(next.transports.map((t, i) => [t.name, i]));
    const running = engine.currentTransports().sort((a, b) => (order.get(a.name) ?? 0) - (order.get(b.name) ?? 0));
    this.deps.applied(this.running, running);
    logger.info({ file, configHash: this.hash, ...transports }, 'config reloaded: routes apply to parts not yet queued; unchanged transports kept their binds');
    if (restartNeeded.length > 0) {
      logger.warn({ file, keys: restartNeeded }, `config reload: ${restartNeeded.join(', ')} changed in the file and need a restart; they keep their running values`);
    }
    return { reloaded: true, file, configHash: this.hash, transports, restartNeeded };
  }

  private refused(err: GatewayError): ReloadOutcome {
    const { file, logger } = this.deps;
    const key = typeof err.details['path'] === 'string' ? err.details['path'] : null;
    logger.error({ file, key, code: err.code }, `config reload refused, the running config stays: ${err.message}`);
    return { reloaded: false, file, configHash: this.hash, error: { code: err.code, message: err.message, key } };
  }
}

function describeChanges(diff: { changed: string[]; added: string[]; removed: string[] }): string {
  const parts = [
    ...diff.added.map((n) => `${n} added`),
    ...diff.changed.map((n) => `${n} changed`),
    ...diff.removed.map((n) => `${n} removed`),
  ];
  return parts.join(', ');
}

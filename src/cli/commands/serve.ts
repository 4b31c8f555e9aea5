/**
 * `smsgate serve [--config FILE]`: the API, campaign processor, dispatcher and webhook sender in
 * one process. Applies pending migrations at start. SIGTERM or SIGINT stops taking work, waits for
 * in-flight submits (bounded by engine.drainTimeoutMs), flushes state and exits 0; a second signal
 * while stopping exits at once with 1 (state is durable; the next start resumes). SIGHUP reopens
 * `logging.file` (src/cli/process-logger.ts) and reloads the config file (src/gateway/config-reload.ts,
 * docs/behaviour/reload.md): routes and transports change in place, a file that does not validate
 * is refused with its key and the running config stays. `smsgate config reload` asks the same
 * through the admin listener.
 */
import { loadConfig, locateConfig } from '../../gateway/config.js';
import { createGateway } from '../../index.js';
import { parseArgs, UsageError, withUsage } from '../args.js';
import { listenErrorCode, listenFailureText } from '../listen-check.js';
import { createProcessLogger } from '../process-logger.js';
import { limitHeapGrowth } from '../serve-heap.js';

const USAGE = 'smsgate serve [--config FILE]';

export async function run(args: string[]): Promise<number> {
  return withUsage(async () => {
    const parsed = parseArgs(args, { values: ['config'] }, USAGE);
    if (parsed.positionals.length > 0) throw new UsageError(`unexpected argument '${parsed.positionals[0] ?? ''}'`, USAGE);
    // Before anything allocates much: bounds the old generation's garbage (serve-heap.ts).
    limitHeapGrowth();
    const file = locateConfig(parsed.values.get('config'));
    const config = loadConfig(file);
    const logs = createProcessLogger({ level: config.logging.level, ...(config.logging.file === undefined ? {} : { file: config.logging.file }) });
    const logger = logs.logger;
    // Installed before anything else can take long: without a handler SIGHUP would end the process.
    let reloadConfig = (): void => {
      logger.warn({ file }, 'SIGHUP while starting: the config is not reloaded (send it again once listening)');
    };
    process.on('SIGHUP', () => {
      if (logs.reopen()) logger.info({ file: config.logging.file }, 'log file reopened (SIGHUP)');
      else logger.info('SIGHUP: logging to stdout, no log file to reopen');
      reloadConfig();
    });
    // SIGTERM and SIGINT are heard from here on: one that comes while the gateway is still starting
    // (its listening line may already be out) is kept and acted on once start has returned, instead
    // of Node's default of ending the process on the spot.
    let onSignal = (signal: NodeJS.Signals): void => {
      signalDuringStart ??= signal;
    };
    let signalDuringStart: NodeJS.Signals | undefined;
    process.on('SIGTERM', (signal) => onSignal(signal));
    process.on('SIGINT', (signal) => onSignal(signal));
    const gateway = await createGateway(config, { logger, configFile: file });
    try {
      await gateway.start();
    } catch (err) {
      // The API's listen error is a bare errno: name the keys, as the admin listener's own error does.
      const code = listenErrorCode(err);
      if (code === undefined) throw err;
      process.stderr.write(`smsgate: ${file}: ${listenFailureText({ section: 'api', host: config.api.host, port: config.api.port }, code)}\n`);
      return 1;
    }
    // The reloader logs what it applied or why it refused; this only reports a reload that failed midway.
    reloadConfig = (): void => {
      logger.info({ file }, 'SIGHUP: reloading the config file');
      gateway.reload().catch((err: unknown) => logger.error({ err, file }, 'config reload failed'));
    };
    const code = await new Promise<number>((resolve) => {
      let stopping = false;
      onSignal = (signal: NodeJS.Signals): void => {
        if (stopping) {
          logger.warn({ signal }, 'second signal while stopping: exiting now');
          process.exit(1);
        }
        stopping = true;
        reloadConfig = (): void => logger.info({ file }, 'SIGHUP while stopping: the config is not reloaded');
        logger.info({ signal }, 'stopping');
        gateway.stop().then(
          () => resolve(0),
          (err: unknown) => {
            logger.error({ err }, 'stop failed');
            resolve(1);
          },
        );
      };
      if (signalDuringStart !== undefined) onSignal(signalDuringStart);
    });
    // Everything is closed by now; this only guards against a library handle that would keep the
    // process alive after a clean stop. unref: it never delays an exit that is already happening.
    setTimeout(() => process.exit(code), 2_000).unref();
    return code;
  });
}

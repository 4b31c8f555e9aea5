/**
 * `smsgate serve [--config FILE]`: the API, campaign processor, dispatcher and webhook sender in
 * one process. Applies pending migrations at start. SIGTERM or SIGINT stops taking work, waits for
 * in-flight submits (bounded by engine.drainTimeoutMs), flushes state and exits 0; a second signal
 * while stopping exits at once with 1 (state is durable; the next start resumes).
 */
import { loadConfig } from '../../config/index.js';
import { createGateway } from '../../index.js';
import { createLogger } from '../../log.js';
import { parseArgs, UsageError, withUsage } from '../args.js';

const USAGE = 'smsgate serve [--config FILE]';

export async function run(args: string[]): Promise<number> {
  return withUsage(async () => {
    const parsed = parseArgs(args, { values: ['config'] }, USAGE);
    if (parsed.positionals.length > 0) throw new UsageError(`unexpected argument '${parsed.positionals[0] ?? ''}'`, USAGE);
    const config = loadConfig(parsed.values.get('config'));
    const logging = config['logging'] as { level?: string } | undefined;
    const logger = createLogger(logging?.level === undefined ? {} : { level: logging.level });
    const gateway = await createGateway(config, { logger });
    await gateway.start();
    const code = await new Promise<number>((resolve) => {
      let stopping = false;
      const onSignal = (signal: NodeJS.Signals): void => {
        if (stopping) {
          logger.warn({ signal }, 'second signal while stopping: exiting now');
          process.exit(1);
        }
        stopping = true;
        logger.info({ signal }, 'stopping');
        gateway.stop().then(
          () => resolve(0),
          (err: unknown) => {
            logger.error({ err }, 'stop failed');
            resolve(1);
          },
        );
      };
      process.on('SIGTERM', onSignal);
      process.on('SIGINT', onSignal);
    });
    // Everything is closed by now; this only guards against a library handle that would keep the
    // process alive after a clean stop. unref: it never delays an exit that is already happening.
    setTimeout(() => process.exit(code), 2_000).unref();
    return code;
  });
}

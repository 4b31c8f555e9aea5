/**
 * The bench side of bench/common/gateway-child.ts: spawns the gateway (createGateway from a config
 * file, what `smsgate serve` runs) in its own process so the client's work does not share its event
 * loop, and reads its own figures (event-loop delay, loop turn lengths, peak RSS) over stdio.
 * Used by bench:large-body and bench:api's million-recipient run.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { REPO_ROOT } from '../../test/support/gateway-process.js';

/** What the gateway measured of itself since the last reset(). */
export interface GatewayStats {
  eventLoopDelayP99Ms: number;
  eventLoopDelayMaxMs: number;
  peakRssBytes: number;
  turnP50Ms: number;
  turnP99Ms: number;
  turnMaxMs: number;
}

export interface GatewayUnderTest {
  readonly port: number;
  readonly pid: number;
  /** Clears the gateway's delay and turn histograms. */
  reset(): void;
  stats(): Promise<GatewayStats>;
  /** Ends its stdin (it stops the gateway and exits) and waits for the exit. */
  stop(): Promise<void>;
}

/**
 * SMSGATE_GATEWAY_NODE_ARGS (space-separated node options, e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof",
 * or "--trace-gc", whose lines are passed to stderr)
 * are passed to the gateway process.
 */
export async function startGatewayUnderTest(configPath: string): Promise<GatewayUnderTest> {
  const nodeArgs = process.env['SMSGATE_GATEWAY_NODE_ARGS']?.split(' ').filter((a) => a !== '') ?? [];
  const child: ChildProcess = spawn(process.execPath, [...nodeArgs, join(REPO_ROOT, 'dist', 'bench', 'common', 'gateway-child.js'), configPath], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const lines = createInterface({ input: child.stdout! })[Symbol.asyncIterator]();
  // Lines that are not the protocol's JSON (node's own output, e.g. --trace-gc through
  // SMSGATE_GATEWAY_NODE_ARGS) go to stderr rather than breaking the protocol.
  const nextLine = async <T>(): Promise<T> => {
    for (;;) {
      const line = await lines.next();
      if (line.done === true) throw new Error('the gateway process exited');
      const text = String(line.value);
      if (text.startsWith('{')) return JSON.parse(text) as T;
      process.stderr.write(`${text}\n`);
    }
  };
  const stop = async (): Promise<void> => {
    child.stdin!.end();
    await new Promise<void>((resolve) => {
      if (child.exitCode !== null || child.signalCode !== null) resolve();
      else child.once('exit', () => resolve());
    });
  };
  try {
    const { port } = await nextLine<{ port: number }>();
    return {
      port,
      pid: child.pid!,
      reset: () => void child.stdin!.write('reset\n'),
      stats: async () => {
        child.stdin!.write('stats\n');
        return nextLine<GatewayStats>();
      },
      stop,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}

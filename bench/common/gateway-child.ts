/**
 * The gateway under test for bench:large-body and bench:api's million-recipient run
 * (./gateway-under-test.ts spawns it): `createGateway` from a config file (what `smsgate serve`
 * runs), in its own process so the client's work does not share its event loop. It measures its
 * own event-loop delay (perf_hooks) and loop turn lengths. Protocol on stdio, one JSON line each:
 * prints {"port"} once listening; reads "reset" (clear the histograms) and "stats" (print the
 * figures); stops when stdin ends.
 */
import { createHistogram, monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { createInterface } from 'node:readline';
import { createGateway, createLogger, loadConfig } from '../../src/index.js';

const configPath = process.argv[2];
if (configPath === undefined) throw new Error('usage: gateway-child CONFIG');
const gateway = await createGateway(loadConfig(configPath), { logger: createLogger({ level: 'warn', destination: process.stderr }) });
await gateway.start();
const delay = monitorEventLoopDelay({ resolution: 10 });
delay.enable();
// Loop turn lengths (a setImmediate chain runs once per turn): libuv accepts one new connection per
// turn, so the turn length bounds how fast new connections are taken (src/common/loop-turns.ts).
const turns = createHistogram();
let lastTurnMs = performance.now();
const onTurn = (): void => {
  const nowMs = performance.now();
  turns.record(Math.max(1, Math.round((nowMs - lastTurnMs) * 1000)));
  lastTurnMs = nowMs;
  turnTimer = setImmediate(onTurn);
};
let turnTimer = setImmediate(onTurn);
process.stdout.write(`${JSON.stringify({ port: gateway.address()?.port })}\n`);

createInterface({ input: process.stdin }).on('line', (line) => {
  if (line === 'reset') {
    delay.reset();
    turns.reset();
  }
  if (line === 'stats') {
    process.stdout.write(`${JSON.stringify({
      eventLoopDelayP99Ms: delay.percentile(99) / 1e6,
      eventLoopDelayMaxMs: delay.max / 1e6,
      peakRssBytes: process.resourceUsage().maxRSS * 1024,
      turnP50Ms: turns.percentile(50) / 1000,
      turnP99Ms: turns.percentile(99) / 1000,
      turnMaxMs: turns.max / 1000,
    })}\n`);
  }
});
process.stdin.on('end', () => {
  clearImmediate(turnTimer);
  void gateway.stop().then(() => process.exit(0));
});

/**
 * The gateway under test for bench/large-body: `createGateway` from a config file (what `smsgate
 * serve` runs), in its own process so the client's work does not share its event loop. It measures
 * its own event-loop delay (perf_hooks). Protocol on stdio, one JSON line each: prints {"port"} once
 * listening; reads "reset" (clear the delay histogram) and "stats" (print the figures); stops when
 * stdin ends.
 */
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { createInterface } from 'node:readline';
import { createGateway, createLogger, loadConfig } from '../../src/index.js';

const configPath = process.argv[2];
if (configPath === undefined) throw new Error('usage: gateway-child CONFIG');
const gateway = await createGateway(loadConfig(configPath), { logger: createLogger({ level: 'warn', destination: process.stderr }) });
await gateway.start();
const delay = monitorEventLoopDelay({ resolution: 10 });
delay.enable();
process.stdout.write(`${JSON.stringify({ port: gateway.address()?.port })}\n`);

createInterface({ input: process.stdin }).on('line', (line) => {
  if (line === 'reset') delay.reset();
  if (line === 'stats') {
    process.stdout.write(`${JSON.stringify({
      eventLoopDelayP99Ms: delay.percentile(99) / 1e6,
      eventLoopDelayMaxMs: delay.max / 1e6,
      peakRssBytes: process.resourceUsage().maxRSS * 1024,
    })}\n`);
  }
});
process.stdin.on('end', () => {
  void gateway.stop().then(() => process.exit(0));
});

/**
 * CPU cost per submit_sm on the ESME side, for profiling (node --cpu-prof, valgrind): sends
 * COUNT submits through SmppTransport or a bare `smpp` client to the test SMSC in a child
 * process and prints the CPU microseconds this process spent per part. Load on the machine
 * barely moves this figure, unlike the wall-clock rate.
 *
 *   node dist/bench/smpp/profile.js ours|bare BINDS WINDOW [COUNT]
 */
import { measureBare, measureTransport, startSmscProcess } from './drivers.js';

const [mode = 'ours', binds = '1', window = '10', count = '50000'] = process.argv.slice(2);
const smsc = await startSmscProcess();
const measure = mode === 'bare' ? measureBare : measureTransport;
await measure(smsc.address, Number(binds), Number(window), { parts: 2_000 });
const result = await measure(smsc.address, Number(binds), Number(window), { parts: Number(count) });
console.log(JSON.stringify({ mode, binds: Number(binds), window: Number(window), ...result }));
await smsc.stop();

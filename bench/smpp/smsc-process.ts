/**
 * The test SMSC in its own process for the benchmark, so the SMSC and the ESME under test do
 * not share one event loop. Prints its port as one JSON line, stops when stdin closes.
 */
import { TestSmsc } from '../../test/support/smsc/test-smsc.js';

const smsc = await TestSmsc.start({ record: false });
process.stdout.write(`${JSON.stringify({ port: smsc.address.port })}\n`);
process.stdin.resume();
process.stdin.on('end', () => {
  void smsc.stop().then(() => process.exit(0));
});

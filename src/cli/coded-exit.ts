/**
 * How the offline commands (modem probe, pdu decode) report a failure the code can name: a
 * GatewayError prints `smsgate: CODE: message` on stderr and exits 1; anything else is a bug
 * and propagates. Usage errors stay the caller's (exit 2 via withUsage).
 */
import { isGatewayError } from '../errors.js';

export async function withCodedExit(body: () => number | Promise<number>): Promise<number> {
  try {
    return await body();
  } catch (err) {
    if (!isGatewayError(err)) throw err;
    process.stderr.write(`smsgate: ${err.code}: ${err.message}\n`);
    return 1;
  }
}

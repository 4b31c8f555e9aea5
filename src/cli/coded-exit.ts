/**
 * How the CLI reports a failure the code can name: a GatewayError prints `smsgate: CODE: message`
 * (offline commands) or `smsgate: message` (admin commands, admin-session.ts) on stderr and exits
 * with `exitCodeFor(code)`; anything else is a bug and propagates. Usage errors stay the caller's
 * (exit 2 via withUsage).
 */
import { maskKnownSecrets } from '../common/secret-text.js';
import { isGatewayError, type ErrorCode } from '../common/errors.js';

/** README "CLI": a command that fails for a named reason exits 1; 2 is kept for usage errors. */
export const CODED_FAILURE_EXIT = 1;

/** The one place a code becomes a CLI exit code. Every code exits 1 today; a code needing its own exit status is added here. */
export function exitCodeFor(_code: ErrorCode): number {
  return CODED_FAILURE_EXIT;
}

export async function withCodedExit(body: () => number | Promise<number>): Promise<number> {
  try {
    return await body();
  } catch (err) {
    if (!isGatewayError(err)) throw err;
    process.stderr.write(`smsgate: ${err.code}: ${maskKnownSecrets(err.message)}\n`);
    return exitCodeFor(err.code);
  }
}

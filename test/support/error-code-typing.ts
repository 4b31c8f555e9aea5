/**
 * Compile-time proof for , checked by `npm run build` (tsc includes test/support):
 * `GatewayError` and `isGatewayError` take only codes from the ERROR_CODE table. If the table ever
 * widened to `string`, the `@ts-expect-error` lines would stop erroring and the build would fail.
 * Never called: it only has to type-check.
 */
import { ERROR_CODE, GatewayError, isGatewayError } from '../../src/common/errors.js';

export function errorCodeTypingChecks(err: unknown): GatewayError[] {
  // @ts-expect-error 'WINDOW_FUL' is not in the ERROR_CODE table.
  const misspelt = new GatewayError('WINDOW_FUL', 'unknown code');
  // @ts-expect-error a comparison with an unknown code does not compile either.
  const compared = isGatewayError(err, 'AT_TIMEOUTS');
  const known = new GatewayError(ERROR_CODE.AT_TIMEOUT, compared ? 'known code' : 'known code');
  return [misspelt, known];
}

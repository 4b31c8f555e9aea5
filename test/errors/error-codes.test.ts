/**
 * One table of error codes, each mapping to an HTTP status (api/http-errors.ts)
 * and a CLI exit code (cli/coded-exit.ts), and an unknown code rejected by the compiler.
 */
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { httpProblemFor } from '../../src/api/http-errors.js';
import { exitCodeFor } from '../../src/cli/coded-exit.js';
import { ERROR_CODE, ERROR_CODES, GatewayError, isErrorCode, isGatewayError } from '../../src/common/errors.js';

describe('the error code table', () => {
  it('keys equal values and the list holds every key once', () => {
    for (const [key, value] of Object.entries(ERROR_CODE)) expect(value).toBe(key);
    expect(new Set(ERROR_CODES).size).toBe(ERROR_CODES.length);
    expect(ERROR_CODES).toEqual(Object.keys(ERROR_CODE));
    expect(ERROR_CODES.every(isErrorCode)).toBe(true);
    expect(isErrorCode('WINDOW_FUL')).toBe(false);
  });

  it('maps every code to an HTTP status and a CLI exit code', () => {
    for (const code of ERROR_CODES) {
      const { status, title } = httpProblemFor(code);
      expect(status, code).toBeGreaterThanOrEqual(400);
      expect(status, code).toBeLessThan(600);
      expect(title.length, code).toBeGreaterThan(0);
      // 2 is the usage-error exit (withUsage); a coded failure must never look like one, nor like success.
      expect(exitCodeFor(code), code).toBe(1);
    }
  });

  it('keeps the HTTP statuses the API answered before the table (SPEC.md Errors)', () => {
    const expected: Record<string, number> = {
      CAMPAIGN_INVALID: 400,
      CAMPAIGN_ID_INVALID: 400,
      CAMPAIGN_NOT_FOUND: 404,
      CAMPAIGN_NOT_STORED: 503,
      REQUEST_BODY_INVALID: 400,
      REQUEST_BODY_TOO_LARGE: 413,
      REQUEST_BODY_BUDGET_EXHAUSTED: 503,
      NOT_CLIENT_ADMINISTRATOR: 403,
      STORE_UNAVAILABLE: 503,
      REQUEST_CLIENT_BUDGET_EXHAUSTED: 429,
      REQUEST_BODY_TOO_SLOW: 408,
      // An immediate creation failure (SPEC.md: 400 Validation Error); the Idempotency-Key draft's 409 and 422.
      CREDITS_INSUFFICIENT: 400,
      IDEMPOTENCY_KEY_INVALID: 400,
      IDEMPOTENCY_KEY_IN_FLIGHT: 409,
      IDEMPOTENCY_KEY_REUSED: 422,
    };
    for (const code of ERROR_CODES) {
      const problem = httpProblemFor(code);
      expect(problem.status, code).toBe(expected[code] ?? 500);
      expect(problem.mapped, code).toBe(code in expected);
    }
  });

  it('GatewayError carries its code and isGatewayError matches on it', () => {
    const err = new GatewayError(ERROR_CODE.AT_TIMEOUT, 'no final result', { retryable: true });
    expect(isGatewayError(err, ERROR_CODE.AT_TIMEOUT)).toBe(true);
    expect(isGatewayError(err, ERROR_CODE.AT_CLOSED)).toBe(false);
  });

  it('rejects an unknown code at compile time', () => {
    const errorsModule = fileURLToPath(new URL('../../src/common/errors.js', import.meta.url)).replace(/\.js$/, '.ts');
    const source = [
      `import { GatewayError, isGatewayError } from ${JSON.stringify(errorsModule.replace(/\.ts$/, '.js'))};`,
      `export const ok = new GatewayError('AT_TIMEOUT', 'known');`,
      `export const misspelt = new GatewayError('WINDOW_FUL', 'unknown');`,
      `export const compared = isGatewayError(ok, 'AT_TIMEOUTS');`,
    ].join('\n');
    const fileName = fileURLToPath(new URL('./__typing-probe.ts', import.meta.url));
    const options: ts.CompilerOptions = { strict: true, noEmit: true, module: ts.ModuleKind.NodeNext, moduleResolution: ts.ModuleResolutionKind.NodeNext, target: ts.ScriptTarget.ES2022, types: [], skipLibCheck: true };
    const host = ts.createCompilerHost(options);
    const readFile = host.readFile.bind(host);
    const fileExists = host.fileExists.bind(host);
    const getSourceFile = host.getSourceFile.bind(host);
    host.readFile = (name) => (name === fileName ? source : readFile(name));
    host.fileExists = (name) => name === fileName || fileExists(name);
    host.getSourceFile = (name, language) => (name === fileName ? ts.createSourceFile(name, source, language) : getSourceFile(name, language));
    const program = ts.createProgram([fileName], options, host);
    const probe = program.getSourceFile(fileName);
    if (probe === undefined) throw new Error('the probe source was not compiled');
    const lines = ts
      .getPreEmitDiagnostics(program, probe)
      .flatMap((d) => (d.file === probe && d.start !== undefined ? [probe.getLineAndCharacterOfPosition(d.start).line + 1] : []));
    // Line 2 (a known code) compiles; lines 3 and 4 (unknown codes) do not.
    expect(lines.sort()).toEqual([3, 4]);
  });
});

/**
 * The modem transport takes its time from the clock it is given (ModemTransportOptions.clock,
 * src/common/clock.ts): no module of it reads the wall clock or sets a timer of its own, so a test that
 * steps a manual clock moves every deadline, pace and poll of it.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const MODEM_DIR = join(import.meta.dirname, '../../src/transports/modem');
const WALL_CLOCK = /\bDate\.now\(|\bnew Date\(\)|\bsetTimeout\(|\bsetInterval\(|\bperformance\.now\(/;

describe('src/transports/modem time', () => {
  it('is read and waited for only through the injected clock', () => {
    const offending = readdirSync(MODEM_DIR)
      .filter((file) => file.endsWith('.ts'))
      .flatMap((file) =>
        readFileSync(join(MODEM_DIR, file), 'utf8')
          .split('\n')
          .map((line, index) => ({ at: `${file}:${index + 1}`, line: line.trim() }))
          .filter(({ line }) => !line.startsWith('*') && !line.startsWith('//') && WALL_CLOCK.test(line))
          .map(({ at, line }) => `${at}: ${line}`),
      );
    expect(offending).toEqual([]);
  });
});

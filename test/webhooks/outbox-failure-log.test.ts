/** The sender's unreachable outbox (outboxFailureLog, a FailureLog) is logged once, then at most every 30 s, and its end once. */
import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createLogger } from '../../src/common/log.js';
import { FAILURE_LOG_INTERVAL_MS } from '../../src/common/failure-log.js';
import { outboxFailureLog } from '../../src/webhooks/outbox.js';

interface Line { level: number; msg: string; [field: string]: unknown }

function capture(): { lines: Line[]; logger: ReturnType<typeof createLogger> } {
  const lines: Line[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      for (const line of chunk.toString('utf8').split('\n')) if (line !== '') lines.push(JSON.parse(line) as Line);
      callback();
    },
  });
  return { lines, logger: createLogger({ level: 'debug', destination }) };
}

describe('outboxFailureLog', () => {
  it('logs the first failure at once, then one line per 30 s counting the failures it stands for, then the recovery', () => {
    const { lines, logger } = capture();
    let nowMs = 1_000_000;
    const log = outboxFailureLog(logger, () => nowMs);
    expect(FAILURE_LOG_INTERVAL_MS).toBe(30_000);
    // A poll every 200 ms for 29.8 s: 150 failures, one line.
    for (let i = 0; i < 150; i++, nowMs += 200) log.failed(new Error('ECONNREFUSED'), { what: 'reading due events' });
    expect(lines.filter((l) => l.level === 50)).toHaveLength(1);
    expect(lines[0]).toMatchObject({ what: 'reading due events', failuresSinceLastLine: 1, failingForMs: 0 });
    nowMs = 1_000_000 + 30_000;
    log.failed(new Error('ECONNREFUSED'), { what: 'writing results' });
    expect(lines.filter((l) => l.level === 50)).toHaveLength(2);
    expect(lines[1]).toMatchObject({ what: 'writing results', failuresSinceLastLine: 150, failingForMs: 30_000 });
    nowMs += 5_000;
    log.failed(new Error('ECONNREFUSED'), { what: 'reading due events' });
    log.recovered();
    log.recovered();
    expect(lines).toHaveLength(3);
    expect(lines[2]).toMatchObject({ level: 30, msg: 'webhook outbox reachable again', failingForMs: 35_000, failuresSinceLastLine: 1, failures: 152 });
    // A new outage is logged at once again.
    log.failed(new Error('ECONNRESET'), { what: 'reading due events' });
    expect(lines).toHaveLength(4);
    expect(lines[3]).toMatchObject({ level: 50, failuresSinceLastLine: 1, failingForMs: 0 });
  });
});

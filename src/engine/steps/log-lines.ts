/**
 * Log lines a planner decides on and the backend writes only once the plan committed: a batch the
 * store refused runs again, and a rolled-back attempt must not have logged anything.
 */
import type { Logger } from '../../common/log.js';

export interface LogLine {
  level: 'info' | 'warn';
  fields: Record<string, unknown>;
  message: string;
}

export function emitLogLines(logger: Logger, lines: readonly LogLine[]): void {
  for (const line of lines) {
    if (line.level === 'warn') logger.warn(line.fields, line.message);
    else logger.info(line.fields, line.message);
  }
}

/**
 * Where `smsgate serve` logs: JSON lines to `logging.file` when set (reopened on SIGHUP, so
 * logrotate can move the file away), else to stdout: human-readable through pino-pretty when stdout
 * is a terminal, JSON lines otherwise (a pipe, journald, a log shipper). Synchronous writes: a line
 * logged just before a crash or exit is on disk, and log volume at `info` is low.
 */
import { pino } from 'pino';
import pretty from 'pino-pretty';
import { createLogger, type Logger } from '../common/log.js';

export type LogOutput = 'file' | 'pretty' | 'json';

export interface ProcessLogger {
  logger: Logger;
  output: LogOutput;
  /** Reopens the log file by its name (a new file if the old one was renamed); false when logging to stdout. */
  reopen(): boolean;
}

/** Log files can hold phone numbers and client names: readable by the service user and its group only. */
const LOG_FILE_MODE = 0o640;

export function createProcessLogger(options: { level: string; file?: string; stdout?: NodeJS.WriteStream }): ProcessLogger {
  const stdout = options.stdout ?? process.stdout;
  if (options.file !== undefined) {
    const destination = pino.destination({ dest: options.file, sync: true, mkdir: true, mode: LOG_FILE_MODE });
    return {
      logger: createLogger({ level: options.level, destination }),
      output: 'file',
      reopen() {
        destination.reopen();
        return true;
      },
    };
  }
  if (stdout.isTTY === true) {
    const destination = pretty({ colorize: true, sync: true, destination: stdout, translateTime: 'SYS:yyyy-mm-dd HH:MM:ss.l', ignore: 'pid,hostname,service' });
    return { logger: createLogger({ level: options.level, destination }), output: 'pretty', reopen: () => false };
  }
  // pino's own stdout destination when it is the process's stdout, as before this module existed.
  const destination = options.stdout === undefined ? {} : { destination: options.stdout };
  return { logger: createLogger({ level: options.level, ...destination }), output: 'json', reopen: () => false };
}

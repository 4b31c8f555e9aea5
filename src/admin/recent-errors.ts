/**
 * The status page's "recent errors": the last N warn/error/fatal log events of the transports and
 * the webhook sender, kept in memory. It taps the logger those parts get (tapLogger), so nothing
 * in them changes. Only the message and a few known, secret-free context fields are kept; the
 * page escapes them all the same (a bind's last error can quote an SMSC's text).
 */
import type { Logger } from '../common/log.js';

export interface RecentError {
  atMs: number;
  level: 'warn' | 'error' | 'fatal';
  /** The log message. */
  message: string;
  /** Known context fields (transport, bind, device, clientId, status, reason...), stringified. */
  context: Record<string, string>;
}

/** Context fields worth showing; everything else (bodies, headers, configs) is left out. */
const KEPT_FIELDS = ['transport', 'bind', 'device', 'part', 'component', 'clientId', 'outboxId', 'status', 'reason', 'lastError', 'code', 'retryInMs', 'attempts', 'cause', 'host', 'failures', 'eventsHeld', 'deadLetters', 'failingForMs'] as const;
const MAX_FIELD_CHARS = 300;

export class RecentErrors {
  private readonly events: RecentError[] = [];

  constructor(
    readonly capacity = 50,
    private readonly now: () => number = Date.now,
  ) {}

  add(level: RecentError['level'], message: string, fields: Record<string, unknown>): void {
    const context: Record<string, string> = {};
    for (const key of KEPT_FIELDS) {
      const value = fields[key];
      if (value !== undefined && value !== null) context[key] = clip(String(value));
    }
    const err = fields['err'];
    if (err !== undefined && err !== null) context['error'] = clip(err instanceof Error ? err.message : typeof err === 'string' ? err : JSON.stringify(err));
    this.events.push({ atMs: this.now(), level, message: clip(message), context });
    if (this.events.length > this.capacity) this.events.shift();
  }

  /** Newest first. */
  list(): RecentError[] {
    return [...this.events].reverse();
  }
}

function clip(text: string): string {
  return text.length <= MAX_FIELD_CHARS ? text : `${text.slice(0, MAX_FIELD_CHARS)}…`;
}

const TAPPED_LEVELS = new Set(['warn', 'error', 'fatal']);

/**
 * A logger that behaves exactly like `logger` and also records warn/error/fatal events (with the
 * bindings of every child made from it) into `sink`. pino offers no per-child hook, so this is a
 * Proxy over the pino instance: `child()` returns a tapped child, the level methods record first.
 */
export function tapLogger(logger: Logger, sink: RecentErrors, bindings: Record<string, unknown> = {}): Logger {
  return new Proxy(logger, {
    get(target, property, receiver) {
      if (property === 'child') {
        return (childBindings: Record<string, unknown>, options?: object) =>
          tapLogger(target.child(childBindings, options), sink, { ...bindings, ...childBindings });
      }
      const value: unknown = Reflect.get(target, property, receiver);
      if (typeof property === 'string' && TAPPED_LEVELS.has(property) && typeof value === 'function') {
        return (...args: unknown[]) => {
          // Recorded whatever the log level: the page shows them even when logs are quiet.
          record(sink, property as RecentError['level'], bindings, args);
          return (value as (...a: unknown[]) => unknown).apply(target, args);
        };
      }
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
}

function record(sink: RecentErrors, level: RecentError['level'], bindings: Record<string, unknown>, args: unknown[]): void {
  const [first, second] = args;
  if (typeof first === 'string') {
    sink.add(level, first, bindings);
  } else if (first instanceof Error) {
    sink.add(level, typeof second === 'string' ? second : first.message, { ...bindings, err: first });
  } else if (first !== null && typeof first === 'object') {
    sink.add(level, typeof second === 'string' ? second : '', { ...bindings, ...(first as Record<string, unknown>) });
  }
}

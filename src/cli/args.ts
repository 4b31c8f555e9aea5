/**
 * Minimal, strict flag parsing for the CLI: `--name value`, `--name=value` and boolean flags.
 * Unknown flags and missing values are usage errors (exit code 2), never silently ignored.
 */
export class UsageError extends Error {
  constructor(message: string, readonly usageLine: string) {
    super(message);
    this.name = 'UsageError';
  }
}

export interface FlagSpec {
  /** Flags that take a value. */
  values?: readonly string[];
  /** Flags that are on/off. */
  booleans?: readonly string[];
}

export interface ParsedArgs {
  values: Map<string, string>;
  booleans: Set<string>;
  positionals: string[];
}

export function parseArgs(args: readonly string[], spec: FlagSpec, usageLine: string): ParsedArgs {
  const valueFlags = new Set(spec.values ?? []);
  const booleanFlags = new Set(spec.booleans ?? []);
  const parsed: ParsedArgs = { values: new Map(), booleans: new Set(), positionals: [] };
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] as string;
    if (!arg.startsWith('--')) {
      parsed.positionals.push(arg);
      continue;
    }
    const eq = arg.indexOf('=');
    const name = eq === -1 ? arg.slice(2) : arg.slice(2, eq);
    if (booleanFlags.has(name) && eq === -1) {
      parsed.booleans.add(name);
    } else if (valueFlags.has(name)) {
      const value = eq === -1 ? args[++i] : arg.slice(eq + 1);
      if (value === undefined) throw new UsageError(`--${name} needs a value`, usageLine);
      parsed.values.set(name, value);
    } else {
      throw new UsageError(`unknown option --${name}`, usageLine);
    }
  }
  return parsed;
}

export function requireValue(parsed: ParsedArgs, name: string, usageLine: string): string {
  const value = parsed.values.get(name);
  if (value === undefined) throw new UsageError(`--${name} is required`, usageLine);
  return value;
}

/** Runs a command body, turning a UsageError into the usage line on stderr and exit code 2. */
export async function withUsage(body: () => Promise<number>): Promise<number> {
  try {
    return await body();
  } catch (err) {
    if (err instanceof UsageError) {
      process.stderr.write(`smsgate: ${err.message}\nusage: ${err.usageLine}\n`);
      return 2;
    }
    throw err;
  }
}

/** Refuses arguments a command does not take, naming the first one. */
export function rejectExtraArguments(extra: readonly string[], usageLine: string): void {
  if (extra.length > 0) throw new UsageError(`unexpected argument '${extra[0] ?? ''}'`, usageLine);
}

/**
 * The usage error for a missing or unknown subcommand (`smsgate pdu …`) or action
 * (`smsgate client …`); `expected`, when given, is listed after a missing one.
 */
export function unknownWordError(kind: 'subcommand' | 'action', given: string | undefined, usageLine: string, expected?: string): UsageError {
  if (given !== undefined) return new UsageError(`unknown ${kind} '${given}'`, usageLine);
  return new UsageError(expected === undefined ? `missing ${kind}` : `missing ${kind}: ${expected}`, usageLine);
}

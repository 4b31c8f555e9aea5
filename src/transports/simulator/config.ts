/**
 * The simulator transport's config (one entry of the config file's `transports` list) and the
 * JSON schema the config module validates it with. The simulator is the embedded default: an
 * in-process SMSC that accepts parts at a set rate and reports receipts after a delay.
 */
export type SimulatorOutcomeKind = 'receipt' | 'reject' | 'temporary';

/**
 * What happens to numbers ending in `suffix` (the longest matching suffix wins):
 * - receipt (default): accepted, then a receipt with `status` after receiptDelayMs;
 * - reject: refused at submit, a permanent failure with `status`;
 * - temporary: refused at submit with `status` as a temporary failure for the first `failures`
 *   attempts of each part (default: every attempt), then accepted and delivered.
 */
export interface SimulatorOutcome {
  suffix: string;
  status: string;
  kind?: SimulatorOutcomeKind;
  failures?: number;
}

export interface ResolvedSimulatorOutcome extends SimulatorOutcome {
  kind: SimulatorOutcomeKind;
}

export interface SimulatorTransportConfig {
  name: string;
  type: 'simulator';
  /** Parts accepted per second at most; submits beyond it wait their turn. */
  maxPerSecond?: number;
  /** Submits the engine may have in flight at once. */
  window?: number;
  receiptDelayMs?: number;
  /**
   * Omitted or []: every number gets defaultStatus (DELIVRD). SIMULATOR_DEMO_OUTCOMES (also in
   * config/simulator-demo.json) is a table that shows every path.
   */
  outcomes?: SimulatorOutcome[];
  defaultStatus?: string;
}

export interface ResolvedSimulatorConfig {
  name: string;
  type: 'simulator';
  maxPerSecond: number;
  window: number;
  receiptDelayMs: number;
  outcomes: readonly ResolvedSimulatorOutcome[];
  defaultStatus: string;
}

/**
 * The built-in default: no rule, so every number gets defaultStatus (DELIVRD). A gateway started on
 * the embedded default behaves like a carrier that delivers everything.
 */
export const DEFAULT_SIMULATOR_OUTCOMES: readonly SimulatorOutcome[] = [];

/**
 * A demo table that shows every path (config/simulator-demo.json carries the same JSON): numbers
 * ending in 9 get an UNDELIV receipt, 8 are rejected at submit (REJECTD), 7 are throttled once and
 * then delivered.
 */
export const SIMULATOR_DEMO_OUTCOMES: readonly SimulatorOutcome[] = [
  { suffix: '9', status: 'UNDELIV', kind: 'receipt' },
  { suffix: '8', status: 'REJECTD', kind: 'reject' },
  { suffix: '7', status: 'ESME_RTHROTTLED', kind: 'temporary', failures: 1 },
];

export const SIMULATOR_DEFAULTS = {
  maxPerSecond: 1_000,
  window: 100,
  receiptDelayMs: 1_000,
  defaultStatus: 'DELIVRD',
} as const;

export function resolveSimulatorConfig(config: SimulatorTransportConfig): ResolvedSimulatorConfig {
  return {
    name: config.name,
    type: 'simulator',
    maxPerSecond: config.maxPerSecond ?? SIMULATOR_DEFAULTS.maxPerSecond,
    window: config.window ?? SIMULATOR_DEFAULTS.window,
    receiptDelayMs: config.receiptDelayMs ?? SIMULATOR_DEFAULTS.receiptDelayMs,
    outcomes: (config.outcomes ?? DEFAULT_SIMULATOR_OUTCOMES).map((o) => ({ ...o, kind: o.kind ?? 'receipt' })),
    defaultStatus: config.defaultStatus ?? SIMULATOR_DEFAULTS.defaultStatus,
  };
}

/** JSON schema (ajv, draft-07) for one simulator entry; unknown keys are rejected. */
export const simulatorConfigSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['name', 'type'],
  properties: {
    name: { type: 'string', minLength: 1 },
    type: { const: 'simulator' },
    maxPerSecond: { type: 'number', exclusiveMinimum: 0 },
    window: { type: 'integer', minimum: 1 },
    receiptDelayMs: { type: 'integer', minimum: 0 },
    defaultStatus: { type: 'string', minLength: 1, maxLength: 30 },
    outcomes: {
      type: 'array',
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['suffix', 'status'],
        properties: {
          suffix: { type: 'string', pattern: '^[0-9]*$' },
          status: { type: 'string', minLength: 1, maxLength: 30 },
          kind: { enum: ['receipt', 'reject', 'temporary'] },
          failures: { type: 'integer', minimum: 1 },
        },
      },
    },
  },
} as const;

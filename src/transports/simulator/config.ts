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
  /** Omitted: DEFAULT_SIMULATOR_OUTCOMES. [] makes every number get defaultStatus. */
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

/** Demos show every path out of the box: ...9 undelivered, ...8 rejected, ...7 retried once then delivered. */
export const DEFAULT_SIMULATOR_OUTCOMES: readonly SimulatorOutcome[] = [
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

/**
 * Validation of the Create Campaign Request (SPEC.md "Create Campaign Request" and "Recipient"):
 * an ajv schema for shapes, types and lengths, then the rules a schema cannot say (a
 * non-whitespace character, the sender id rules, a real calendar date for sendAt).
 *
 * Behaviour chosen to match the reference service (ASP.NET Core with System.Text.Json):
 * - property names match case-insensitively (`Text`, `MSISDN`, `clientReference` are accepted);
 * - unknown properties are ignored;
 * - no type coercion (`"true"` is not a boolean, `5` is not a string);
 * - lengths are counted in UTF-16 code units, as .NET's string.Length does (an emoji counts 2);
 * - a required field that is null is reported as required.
 * Every failure is listed in one detail string naming the field path, e.g.
 * `recipientInfo[3].msisdn is required`.
 */
import { Ajv, type ErrorObject } from 'ajv';
import { validateSender } from '../sms/index.js';
import { yieldToEventLoop } from '../common/loop-turns.js';
import { parseSendAt, type LocalMinute } from './send-at.js';

export const CAMPAIGN_LIMITS = {
  textMaxCharacters: 2000,
  campaignNameMaxCharacters: 30,
  msisdnMaxCharacters: 20,
  clientReferenceMaxCharacters: 30,
} as const;

export const DEFAULT_CAMPAIGN_NAME = 'API Broadcast';

export interface RecipientRequest {
  msisdn: string;
  clientReference: string | null;
}

/** A request that passed every rule, with defaults applied. */
export interface CampaignRequest {
  text: string;
  /** Trimmed (SPEC: leading and trailing spaces are removed). */
  from: string;
  /**
   * The valid recipients as JSON arrays of request recipients (`{"msisdn", "ClientReference"}`,
   * the names as the spec spells them; readStoredRecipients reads them back), in request order:
   * what is stored. A run of the body whose recipients all passed with their names as spelt is
   * kept as the very text it was parsed from (at most the parser's 64 KiB run); others are
   * serialised RECIPIENTS_PER_REQUEST_SLICE at a time. Kept serialised so a million recipients are
   * a few hundred strings for the garbage collector, not millions of objects.
   */
  recipientSlicesJson: string[];
  recipientCount: number;
  /** Stored exactly as supplied (not trimmed). */
  campaignName: string;
  /** The sendAt string as given, or null for "send immediately". */
  sendAtLocal: string | null;
  sendAt: LocalMinute | null;
  createAsDraft: boolean;
  shouldSaveList: boolean;
}

/**
 * A refusal lists the first MAX_LISTED_ERRORS distinct messages and counts them all: 125,000 invalid
 * recipients make one readable detail, never a 125,000-line one (nor a stack overflow spreading them).
 */
export type CampaignRequestResult = { ok: true; request: CampaignRequest } | { ok: false; errors: string[]; errorCount: number };

const CAMPAIGN_FIELDS = ['text', 'from', 'recipientInfo', 'campaignName', 'sendAt', 'createAsDraft', 'shouldSaveList'] as const;
const RECIPIENT_FIELDS = ['msisdn', 'ClientReference'] as const;
const REQUIRED_CAMPAIGN_FIELDS: readonly string[] = ['text', 'from', 'recipientInfo'];
const REQUIRED_RECIPIENT_FIELDS: readonly string[] = ['msisdn'];

/**
 * C0 controls and DEL. Not in the spec's `from` rules, but a sender id is sent as SMPP source_addr, a
 * C-Octet String (SMPP 3.4 §3.1) that a NUL would cut short and corrupt the PDU after it, and no
 * handset shows a control character as a sender; refusing it at the API loses nothing silently.
 */
const CONTROL_CHARACTER = /[\u0000-\u001f\u007f]/;

/**
 * Why a sender id is refused (the SMS core's sender rules, then no control characters), or
 * undefined when it may be used. The one rule for every way a message comes in (the API's `from`,
 * an SMPP customer's source_addr).
 */
export function senderProblem(from: string): string | undefined {
  const sender = checkedSender(from);
  return sender.ok ? undefined : sender.reason;
}

/** The sender id as senderProblem's rules keep it (trimmed), or senderProblem's reason: one validateSender call. */
export function checkedSender(from: string): { ok: true; value: string } | { ok: false; reason: string } {
  const sender = validateSender(from);
  if (!sender.ok) return { ok: false, reason: `from is invalid: ${sender.reason}` };
  if (CONTROL_CHARACTER.test(sender.value)) return { ok: false, reason: 'from must not contain control characters' };
  return { ok: true, value: sender.value };
}

/** SPEC Recipient: digits with an optional leading `+`; no spaces, brackets or hyphens. */
const MSISDN_PATTERN = '^\\+?[0-9]+$';

const RECIPIENT_SCHEMA = {
  type: 'object',
  required: REQUIRED_RECIPIENT_FIELDS,
  properties: {
    msisdn: { type: 'string', pattern: MSISDN_PATTERN },
    ClientReference: { type: ['string', 'null'] },
  },
} as const;

/** The request without its recipients, which are checked one at a time (RECIPIENT_SCHEMA), in slices. */
const SCHEMA = {
  type: 'object',
  required: REQUIRED_CAMPAIGN_FIELDS,
  properties: {
    text: { type: 'string' },
    from: { type: 'string' },
    recipientInfo: { type: 'array', minItems: 1 },
    campaignName: { type: 'string' },
    sendAt: { type: ['string', 'null'] },
    createAsDraft: { type: 'boolean' },
    shouldSaveList: { type: 'boolean' },
  },
} as const;

const ajv = new Ajv({ allErrors: true, coerceTypes: false, useDefaults: false, strict: true });
const validateShape = ajv.compile(SCHEMA);
const validateRecipientShape = ajv.compile(RECIPIENT_SCHEMA);

/** The request schemas, for the OpenAPI document (src/api/openapi.ts) to describe what is enforced. */
export const CAMPAIGN_REQUEST_SCHEMAS = { request: SCHEMA, recipient: RECIPIENT_SCHEMA, msisdnPattern: MSISDN_PATTERN } as const;

/** Messages past this many are summarised as a count, so a 100,000-row mistake stays readable. */
export const MAX_LISTED_ERRORS = 20;

/** Recipients checked between two yields to the event loop. */
export const RECIPIENTS_PER_VALIDATION_SLICE = 1_000;

/** Distinct messages in order of discovery: the first MAX_LISTED_ERRORS kept, all counted. */
class ErrorList {
  readonly listed: string[] = [];
  private readonly seen = new Set<string>();

  get count(): number {
    return this.seen.size;
  }

  add(message: string): void {
    if (this.seen.has(message)) return;
    this.seen.add(message);
    if (this.listed.length < MAX_LISTED_ERRORS) this.listed.push(message);
  }
}

/** Recipients per stored JSON slice of a request (CampaignRequest.recipientSlicesJson). */
export const RECIPIENTS_PER_REQUEST_SLICE = 2_000;

/**
 * recipientInfo not yet parsed: its length, and its elements a run at a time (the API's
 * LazyJsonArray), so they are validated and serialised without all being alive at once.
 */
export interface RecipientSource {
  readonly length: number;
  runs(): AsyncIterator<RecipientRun>;
}

/** A run of a RecipientSource: its elements, and the JSON array text they were parsed from. */
export interface RecipientRun {
  values: unknown[];
  json: string;
}

function isRecipientSource(value: unknown): value is RecipientSource {
  // A parsed JSON value never holds a function, so this cannot match client input.
  return typeof value === 'object' && value !== null && typeof (value as { runs?: unknown }).runs === 'function';
}

/** What the validation asks its driver for: a pause, or the next run of a RecipientSource. */
type Step = 'pause' | { nextRunOf: RecipientSource };

/** Validates in one go. Fine for small bodies; the API uses validateCampaignRequestInSlices. */
export function validateCampaignRequest(body: unknown): CampaignRequestResult {
  const steps = validationSteps(body);
  for (;;) {
    const step = steps.next();
    if (step.done === true) return step.value;
    if (step.value !== 'pause') throw new Error('validateCampaignRequest cannot read a RecipientSource; use validateCampaignRequestInSlices');
  }
}

/**
 * The same verdict as validateCampaignRequest, yielding to the event loop after every
 * RECIPIENTS_PER_VALIDATION_SLICE recipients, so a request with a million recipients never holds
 * the loop for long.
 */
export async function validateCampaignRequestInSlices(
  body: unknown,
  yieldToLoop: () => Promise<void> = yieldToEventLoop,
  onRecipient?: (recipient: RecipientRequest) => void,
): Promise<CampaignRequestResult> {
  const steps = validationSteps(body, onRecipient);
  let runs: AsyncIterator<RecipientRun> | undefined;
  let step = steps.next();
  for (;;) {
    if (step.done === true) return step.value;
    if (step.value !== 'pause') {
      runs ??= step.value.nextRunOf.runs();
      const run = await runs.next();
      step = steps.next(run.done === true ? undefined : run.value);
    } else {
      await yieldToLoop();
      step = steps.next();
    }
  }
}

/**
 * The validation, suspended after each slice of recipients ('pause'); for a RecipientSource it asks
 * for each run ({ nextRunOf }) and is given it (or undefined at the end) by next(). `onRecipient`
 * sees each recipient kept in the slices, as it is kept (what a caller derives from the recipients,
 * e.g. their prices, is then read in the same pass, not from the serialised slices again); its
 * result is void when the request is refused.
 */
function* validationSteps(body: unknown, onRecipient?: (recipient: RecipientRequest) => void): Generator<Step, CampaignRequestResult, RecipientRun | undefined> {
  if (!isPlainObject(body)) return { ok: false, errors: ['the request body must be a JSON object'], errorCount: 1 };
  const candidate = canonicalize(body, CAMPAIGN_FIELDS, REQUIRED_CAMPAIGN_FIELDS);
  const recipientInfo = candidate['recipientInfo'];
  const source = isRecipientSource(recipientInfo) ? recipientInfo : undefined;
  // The schema sees a source as an array of its length (its items are checked below, one by one).
  const shaped = source === undefined ? candidate : { ...candidate, recipientInfo: new Array<unknown>(Math.min(source.length, 1)).fill(null) };
  const errors = new ErrorList();
  if (!validateShape(shaped)) for (const error of validateShape.errors ?? []) errors.add(describeAjvError(error, ''));
  const rules = checkRules(candidate);
  for (const error of rules.errors) errors.add(error);

  const slices = new RecipientSlices();
  let index = 0;
  const check = (item: unknown): void => {
    const recipient = checkRecipient(item, index, errors);
    if (recipient !== undefined && errors.count === 0) {
      slices.add(recipient);
      onRecipient?.(recipient);
    }
    index++;
  };
  if (source !== undefined) {
    for (;;) {
      const run = yield { nextRunOf: source };
      if (run === undefined) break;
      // A run whose recipients all pass with their names as spelt is stored as its own text: no
      // second object and no re-serialisation per recipient (the garbage of a million of them
      // was most of what validating a million-recipient body cost).
      if (errors.count === 0 && run.values.every(isCanonicalRecipient)) {
        for (const item of run.values) {
          if (recipientPasses(item, index, errors) && onRecipient !== undefined && errors.count === 0) onRecipient(recipientOf(item as Record<string, unknown>));
          index++;
        }
        if (errors.count === 0) slices.addRun(run.json);
      } else for (const item of run.values) check(item);
      if (errors.count > 0) slices.clear();
    }
  } else if (Array.isArray(recipientInfo)) {
    for (const item of recipientInfo) {
      if (index > 0 && index % RECIPIENTS_PER_VALIDATION_SLICE === 0) yield 'pause';
      check(item);
    }
  }
  if (errors.count > 0) return { ok: false, errors: errors.listed, errorCount: errors.count };

  const sendAtLocal = (candidate['sendAt'] as string | null | undefined) ?? null;
  return {
    ok: true,
    request: {
      text: candidate['text'] as string,
      from: (candidate['from'] as string).trim(),
      recipientSlicesJson: slices.finish(),
      recipientCount: index,
      campaignName: (candidate['campaignName'] as string | undefined) ?? DEFAULT_CAMPAIGN_NAME,
      sendAtLocal,
      sendAt: rules.sendAt,
      createAsDraft: (candidate['createAsDraft'] as boolean | undefined) ?? false,
      shouldSaveList: (candidate['shouldSaveList'] as boolean | undefined) ?? false,
    },
  };
}

/** Valid recipients, serialised RECIPIENTS_PER_REQUEST_SLICE at a time, or whole runs as sent. */
class RecipientSlices {
  private readonly done: string[] = [];
  private current: StoredRecipient[] = [];

  add(recipient: RecipientRequest): void {
    this.current.push({ msisdn: recipient.msisdn, ClientReference: recipient.clientReference });
    if (this.current.length === RECIPIENTS_PER_REQUEST_SLICE) {
      this.done.push(JSON.stringify(this.current));
      this.current = [];
    }
  }

  /** A JSON array of recipients that all passed as spelt (isCanonicalRecipient), after those added before. */
  addRun(json: string): void {
    if (this.current.length > 0) this.done.push(JSON.stringify(this.current));
    this.current = [];
    this.done.push(json);
  }

  /** Once a request is refused its recipients are not needed. */
  clear(): void {
    this.done.length = 0;
    this.current = [];
  }

  finish(): string[] {
    if (this.current.length > 0 || this.done.length === 0) this.done.push(JSON.stringify(this.current));
    this.current = [];
    return this.done;
  }
}

/** One recipient's shape and lengths; the canonical recipient when it passes. */
function checkRecipient(item: unknown, index: number, errors: ErrorList): RecipientRequest | undefined {
  const recipient = isPlainObject(item) && !isCanonical(item, RECIPIENT_FIELDS) ? canonicalize(item, RECIPIENT_FIELDS, REQUIRED_RECIPIENT_FIELDS) : item;
  return recipientPasses(recipient, index, errors) ? recipientOf(recipient as Record<string, unknown>) : undefined;
}

/** Whether a recipient with canonical names passes its shape and lengths; what fails is added to `errors`. */
function recipientPasses(recipient: unknown, index: number, errors: ErrorList): boolean {
  const before = errors.count;
  // The field path is built only for a message: a string per recipient is garbage a million times.
  if (!validateRecipientShape(recipient)) for (const error of validateRecipientShape.errors ?? []) errors.add(describeAjvError(error, `recipientInfo[${index}]`));
  if (isPlainObject(recipient)) lengthErrors(recipient, RECIPIENT_LENGTHS, () => `recipientInfo[${index}].`, (message) => errors.add(message));
  return errors.count === before && isPlainObject(recipient);
}

/** A recipient whose properties have their canonical names, as a RecipientRequest. */
function recipientOf(recipient: Record<string, unknown>): RecipientRequest {
  return { msisdn: recipient['msisdn'] as string, clientReference: (recipient['ClientReference'] as string | null | undefined) ?? null };
}

/** A recipient as stored in a request slice: the request's own property names. */
interface StoredRecipient {
  msisdn: string;
  ClientReference: string | null;
}

/** A recipient item whose properties already have their canonical names (its stored form is its text). */
function isCanonicalRecipient(item: unknown): boolean {
  return isPlainObject(item) && isCanonical(item, RECIPIENT_FIELDS);
}

/**
 * The recipients of a stored request slice (CampaignRequest.recipientSlicesJson), in order. Slices
 * stored before runs were kept as sent name the reference `clientReference`; both are read.
 */
export function readStoredRecipients(json: string): RecipientRequest[] {
  const parsed: unknown = JSON.parse(json);
  if (!Array.isArray(parsed)) throw new Error('stored recipients are not an array');
  return (parsed as Array<Partial<StoredRecipient> & { clientReference?: string | null }>).map((r) => ({
    msisdn: r.msisdn as string,
    clientReference: r.ClientReference ?? r.clientReference ?? null,
  }));
}

/** One detail string for a problem+json body: the listed messages, then how many there are in all. */
export function formatValidationDetail(errors: readonly string[], errorCount = errors.length): string {
  const listed = errors.slice(0, MAX_LISTED_ERRORS).join('; ');
  const more = errorCount - Math.min(errors.length, MAX_LISTED_ERRORS);
  return more > 0 ? `${listed}; and ${more} more error${more === 1 ? '' : 's'} (${errorCount} in all)` : listed;
}

/**
 * String lengths in UTF-16 code units (string.length, as .NET counts). Checked here rather than with
 * ajv's minLength/maxLength, which count code points. [field, minimum, maximum].
 */
const CAMPAIGN_LENGTHS: ReadonlyArray<readonly [string, number, number]> = [
  ['text', 1, CAMPAIGN_LIMITS.textMaxCharacters],
  ['from', 1, Number.POSITIVE_INFINITY],
  ['campaignName', 1, CAMPAIGN_LIMITS.campaignNameMaxCharacters],
];
const RECIPIENT_LENGTHS: ReadonlyArray<readonly [string, number, number]> = [
  ['msisdn', 1, CAMPAIGN_LIMITS.msisdnMaxCharacters],
  ['ClientReference', 0, CAMPAIGN_LIMITS.clientReferenceMaxCharacters],
];

function lengthErrors(source: Record<string, unknown>, rules: typeof CAMPAIGN_LENGTHS, pathPrefix: () => string, report: (message: string) => void): void {
  for (const [field, minCharacters, maxCharacters] of rules) {
    const value = source[field];
    if (typeof value !== 'string') continue;
    if (value.length >= minCharacters && value.length <= maxCharacters) continue;
    const path = `${pathPrefix()}${field}`;
    if (value.length < minCharacters) report(minCharacters === 1 ? `${path} must not be empty` : `${path} must be at least ${minCharacters} characters`);
    else if (value.length > maxCharacters) report(`${path} must be at most ${maxCharacters} characters`);
  }
}

/** The rules beyond the schema; each runs only when its field already has the right type. */
function checkRules(candidate: Record<string, unknown>): { errors: string[]; sendAt: LocalMinute | null } {
  const errors: string[] = [];
  let sendAt: LocalMinute | null = null;
  lengthErrors(candidate, CAMPAIGN_LENGTHS, () => '', (message) => errors.push(message));
  const { text, from, campaignName, sendAt: sendAtRaw } = candidate;
  if (typeof text === 'string' && text.length > 0 && text.length <= CAMPAIGN_LIMITS.textMaxCharacters && !hasNonWhitespace(text)) {
    errors.push('text must contain a non-whitespace character');
  }
  if (typeof from === 'string' && from.length > 0) {
    const problem = senderProblem(from);
    if (problem !== undefined) errors.push(problem);
  }
  if (typeof campaignName === 'string' && campaignName.length > 0 && !hasNonWhitespace(campaignName)) {
    errors.push('campaignName must contain a non-whitespace character');
  }
  if (typeof sendAtRaw === 'string') {
    if (!hasNonWhitespace(sendAtRaw)) {
      errors.push('sendAt must not be empty or blank');
    } else {
      const parsed = parseSendAt(sendAtRaw);
      if (parsed.ok) sendAt = parsed.local;
      else errors.push(`sendAt ${parsed.reason}`);
    }
  }
  return { errors, sendAt };
}

/**
 * Copies the known properties under their canonical names, matching names case-insensitively
 * (a later duplicate wins, as with repeated JSON keys). A null required field is left out so it is
 * reported as required.
 */
function canonicalize(
  source: Record<string, unknown>,
  fields: readonly string[],
  required: readonly string[],
): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(source)) {
    const canonical = canonicalName(key, fields);
    if (canonical === undefined) continue;
    const value = source[key];
    if (value === null && required.includes(canonical)) delete out[canonical];
    else out[canonical] = value;
  }
  return out;
}

/**
 * True when every property already has its canonical name and no required one is null: canonicalize
 * would copy the object unchanged, and a million copies are garbage the collector pauses for.
 */
function isCanonical(source: Record<string, unknown>, fields: readonly string[]): boolean {
  for (const key in source) {
    if (!Object.prototype.hasOwnProperty.call(source, key)) continue;
    if (!fields.includes(key)) return false;
  }
  return source['msisdn'] !== null;
}

function canonicalName(key: string, fields: readonly string[]): string | undefined {
  for (const field of fields) {
    if (field === key) return field;
  }
  const lower = key.toLowerCase();
  return fields.find((field) => field.toLowerCase() === lower);
}

/** ajv's /recipientInfo/3/msisdn becomes recipientInfo[3].msisdn, as the spec's example writes it. */
function fieldPath(instancePath: string, prefix: string): string {
  let path = prefix;
  for (const segment of instancePath.split('/').slice(1)) {
    if (/^[0-9]+$/.test(segment)) path += `[${segment}]`;
    else path += path === '' ? segment : `.${segment}`;
  }
  return path;
}

const TYPE_WORDS: Record<string, string> = {
  string: 'a string',
  array: 'an array',
  object: 'an object',
  boolean: 'a boolean (true or false)',
  'string,null': 'a string or null',
};

const PATTERN_MESSAGES: Record<string, string> = {
  [MSISDN_PATTERN]: "must contain only digits with an optional leading '+'",
};

function describeAjvError(error: ErrorObject, prefix: string): string {
  const path = fieldPath(error.instancePath, prefix);
  const subject = path === '' ? 'the request body' : path;
  const params = error.params as Record<string, unknown>;
  switch (error.keyword) {
    case 'required': {
      const missing = String(params['missingProperty']);
      return `${path === '' ? missing : `${path}.${missing}`} is required`;
    }
    case 'type': {
      const type = Array.isArray(params['type']) ? params['type'].join(',') : String(params['type']);
      return `${subject} must be ${TYPE_WORDS[type] ?? type}`;
    }
    case 'minItems':
      return `${subject} must contain at least ${String(params['limit'])} item`;
    case 'pattern':
      return `${subject} ${PATTERN_MESSAGES[String(params['pattern'])] ?? `must match ${String(params['pattern'])}`}`;
    default:
      return `${subject} ${error.message ?? 'is invalid'}`;
  }
}

function hasNonWhitespace(value: string): boolean {
  return /\S/.test(value);
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

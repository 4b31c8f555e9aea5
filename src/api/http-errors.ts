/**
 * The one place where error codes become HTTP responses (STYLE.md rule 3). Problem Details per
 * RFC 9457 / SPEC.md "Problem Details": application/problem+json with title, status and detail.
 */
import type { Context } from 'koa';
import { CAMPAIGN_ERROR } from '../campaigns/index.js';
import { ERROR_CODE, isGatewayError, type ErrorCode } from '../common/errors.js';
import { isTransientStoreFailure } from '../store/write-failures.js';

export const PROBLEM_CONTENT_TYPE = 'application/problem+json';

/** Codes thrown by the API's own modules. */
export const API_ERROR = {
  bodyInvalid: ERROR_CODE.REQUEST_BODY_INVALID,
  bodyTooLarge: ERROR_CODE.REQUEST_BODY_TOO_LARGE,
  /** api.maxBufferedBytes reached across the requests in flight: not the client's fault, retry. */
  bodyBudgetExhausted: ERROR_CODE.REQUEST_BODY_BUDGET_EXHAUSTED,
  notAdministrator: ERROR_CODE.NOT_CLIENT_ADMINISTRATOR,
  /** The database is unreachable, full or busy (store/write-failures.ts): 503, retry later. */
  storeUnavailable: ERROR_CODE.STORE_UNAVAILABLE,
  /** One client's uploads past its share (api.maxBufferedBytesPerClient, api.maxUploadsPerClient). */
  clientBudgetExhausted: ERROR_CODE.REQUEST_CLIENT_BUDGET_EXHAUSTED,
  /** A body that arrives slower than api.minBodyBytesPerSecond (RFC 9110 §15.5.9). */
  bodyTooSlow: ERROR_CODE.REQUEST_BODY_TOO_SLOW,
  /** An Idempotency-Key header that is not 1 to 255 printable ASCII characters. */
  idempotencyKeyInvalid: ERROR_CODE.IDEMPOTENCY_KEY_INVALID,
} as const;

/** SPEC.md: the title of every 400 on POST /v1/campaign. */
export const VALIDATION_TITLE = 'Validation Error';

/** SPEC.md Errors: the fixed 403 detail. */
export const NOT_ADMINISTRATOR_DETAIL = 'Authenticated user is not a recognized client administrator';

export interface HttpMapping {
  status: number;
  title: string;
}

/** The codes a request can meet by design; every other code reaching a route is a bug (500). */
export const HTTP_BY_CODE: Readonly<Partial<Record<ErrorCode, HttpMapping>>> = {
  [CAMPAIGN_ERROR.invalidRequest]: { status: 400, title: VALIDATION_TITLE },
  [CAMPAIGN_ERROR.invalidId]: { status: 400, title: VALIDATION_TITLE },
  [CAMPAIGN_ERROR.notFound]: { status: 404, title: 'Not Found' },
  // Not an input problem, so not a 400: the client may retry the same request.
  [CAMPAIGN_ERROR.notStored]: { status: 503, title: 'Service Unavailable' },
  // SPEC.md: an immediate creation failure is a 400 Validation Error; the detail names the credits.
  [CAMPAIGN_ERROR.creditsInsufficient]: { status: 400, title: VALIDATION_TITLE },
  // The Idempotency-Key draft: a key reused with another payload is 422, one still in flight 409.
  [CAMPAIGN_ERROR.keyReused]: { status: 422, title: 'Unprocessable Content' },
  [CAMPAIGN_ERROR.keyInFlight]: { status: 409, title: 'Conflict' },
  [API_ERROR.idempotencyKeyInvalid]: { status: 400, title: VALIDATION_TITLE },
  [API_ERROR.bodyInvalid]: { status: 400, title: VALIDATION_TITLE },
  [API_ERROR.bodyTooLarge]: { status: 413, title: 'Content Too Large' },
  [API_ERROR.bodyBudgetExhausted]: { status: 503, title: 'Service Unavailable' },
  [API_ERROR.notAdministrator]: { status: 403, title: 'Forbidden' },
  [API_ERROR.storeUnavailable]: { status: 503, title: 'Service Unavailable' },
  // RFC 6585 §4: this client sends too much at once; the others are still served.
  [API_ERROR.clientBudgetExhausted]: { status: 429, title: 'Too Many Requests' },
  [API_ERROR.bodyTooSlow]: { status: 408, title: 'Request Timeout' },
};

/**
 * The code an error stands for at the HTTP edge: its own when it is a GatewayError the API maps,
 * STORE_UNAVAILABLE when the store could not serve now (the one classification,
 * isTransientStoreFailure, also through a GatewayError's cause), otherwise undefined (a bug: 500).
 */
export function apiCodeOf(err: unknown): ErrorCode | undefined {
  if (isGatewayError(err) && HTTP_BY_CODE[err.code] !== undefined) return err.code;
  if (isTransientStoreFailure(err)) return API_ERROR.storeUnavailable;
  return isGatewayError(err) ? err.code : undefined;
}

/** A code the API does not map is not the client's doing: answered 500 and logged by the caller. */
export const UNMAPPED_CODE_STATUS = 500;

/** The one place a code becomes an HTTP status: its mapping, or 500 for a code no request should meet. */
export function httpProblemFor(code: ErrorCode): HttpMapping & { mapped: boolean } {
  const mapped = HTTP_BY_CODE[code];
  if (mapped !== undefined) return { ...mapped, mapped: true };
  return { status: UNMAPPED_CODE_STATUS, title: 'Internal Server Error', mapped: false };
}

/** Titles for statuses produced without a code (routing, unexpected errors). RFC 9110 §15 reason phrases. */
export const TITLE_BY_STATUS: Readonly<Record<number, string>> = {
  400: VALIDATION_TITLE,
  403: 'Forbidden',
  404: 'Not Found',
  405: 'Method Not Allowed',
  408: 'Request Timeout',
  409: 'Conflict',
  413: 'Content Too Large',
  422: 'Unprocessable Content',
  429: 'Too Many Requests',
  500: 'Internal Server Error',
  501: 'Not Implemented',
  503: 'Service Unavailable',
};

/** Seconds a client should wait before retrying a 503 (RFC 9110 §10.2.3 Retry-After). */
export const RETRY_AFTER_SECONDS = 1;

export interface Problem {
  title: string;
  status: number;
  detail: string;
}

export function sendProblem(ctx: Context, problem: Problem): void {
  ctx.status = problem.status;
  ctx.body = { title: problem.title, status: problem.status, detail: problem.detail };
  ctx.type = PROBLEM_CONTENT_TYPE;
}

export function problemForStatus(status: number, detail: string): Problem {
  return { status, title: TITLE_BY_STATUS[status] ?? 'Error', detail };
}

/** SPEC.md: 401 on the campaign endpoints has no body and `WWW-Authenticate: Bearer`. */
export function sendBearerChallenge(ctx: Context): void {
  // Koa turns a null body into 204 unless the status is set after it; the explicit null then makes
  // Koa send no body at all (Content-Length: 0, no Content-Type).
  ctx.body = null;
  ctx.status = 401;
  ctx.set('WWW-Authenticate', 'Bearer');
}

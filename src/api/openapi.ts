/**
 * The OpenAPI 3.1 document of the whole HTTP interface: every SPEC.md endpoint,
 * GET /v1/inbound as defines it, the delivery-receipt webhook, the error bodies
 * (problem+json, OAuth errors, the legacy shape) and the security schemes. Served at GET
 * /openapi.json without a token. The request schemas start from the ajv schemas the API enforces
 * (campaign-request.ts), with the limits the code checks beside them (CAMPAIGN_LIMITS), so the
 * document and the validator cannot drift apart on shape. Responses the code can give are all
 * listed, including the ones the spec leaves open (413, 429, 503, 500), and the API tests check
 * every response they receive against this document (test/support/openapi-check.ts).
 */
import { CAMPAIGN_LIMITS, CAMPAIGN_REQUEST_SCHEMAS, DEFAULT_CAMPAIGN_NAME } from '../campaigns/campaign-request.js';
import { SEND_AT_PATTERN } from '../campaigns/send-at.js';
import { CAMPAIGN_ACCEPTED_MESSAGE, IDEMPOTENCY_KEY_HEADER } from './campaign-routes.js';
import { NOT_ADMINISTRATOR_DETAIL, PROBLEM_CONTENT_TYPE, VALIDATION_TITLE } from './http-errors.js';

/** A JSON Schema (2020-12, OpenAPI 3.1's dialect) or a reference to one. */
export type JsonSchema = { readonly [keyword: string]: unknown };

export interface OpenApiMediaType { schema: JsonSchema }
export interface OpenApiHeader { description: string; required?: boolean; schema: JsonSchema }
export interface OpenApiResponse {
  description: string;
  headers?: Record<string, OpenApiHeader>;
  content?: Record<string, OpenApiMediaType>;
}
export interface OpenApiParameter {
  name: string;
  in: 'path' | 'query' | 'header';
  required?: boolean;
  description: string;
  schema: JsonSchema;
}
export interface OpenApiOperation {
  operationId: string;
  summary: string;
  description?: string;
  tags: string[];
  security?: Array<Record<string, string[]>>;
  parameters?: OpenApiParameter[];
  requestBody?: { required: boolean; content: Record<string, OpenApiMediaType> };
  responses: Record<string, OpenApiResponse>;
}
export type HttpMethod = 'get' | 'post';
export type OpenApiPathItem = Partial<Record<HttpMethod, OpenApiOperation>>;

export interface OpenApiDocument {
  openapi: '3.1.0';
  info: { title: string; version: string; description: string; license: { name: string; identifier: string } };
  jsonSchemaDialect: string;
  tags: Array<{ name: string; description: string }>;
  paths: Record<string, OpenApiPathItem>;
  webhooks: Record<string, OpenApiPathItem>;
  components: {
    schemas: Record<string, JsonSchema>;
    securitySchemes: Record<string, JsonSchema>;
    responses: Record<string, OpenApiResponse>;
  };
}

const ref = (name: string): JsonSchema => ({ $ref: `#/components/schemas/${name}` });
const responseRef = (name: string): OpenApiResponse => ({ $ref: `#/components/responses/${name}` }) as unknown as OpenApiResponse;
const json = (schema: JsonSchema): Record<string, OpenApiMediaType> => ({ 'application/json': { schema } });
const problem = (description: string): OpenApiResponse => ({ description, content: { [PROBLEM_CONTENT_TYPE]: { schema: ref('Problem') } } });
const retryAfter: Record<string, OpenApiHeader> = {
  'Retry-After': { description: 'Seconds to wait before retrying (RFC 9110 §10.2.3).', required: true, schema: { type: 'string', pattern: '^[0-9]+$' } },
};
const int32 = { type: 'integer', format: 'int32', minimum: 0 } as const;

/** The current API's bearer credentials: a personal access token or a JWT from POST /auth/token. */
const BEARER_CURRENT: Array<Record<string, string[]>> = [{ personalAccessToken: [] }, { accessToken: [] }];

const request = CAMPAIGN_REQUEST_SCHEMAS.request;
const recipient = CAMPAIGN_REQUEST_SCHEMAS.recipient;

const schemas: Record<string, JsonSchema> = {
  CreateCampaignRequest: {
    ...request,
    description: 'SPEC.md "Create Campaign Request". Property names match case-insensitively; unknown properties are ignored. Lengths count UTF-16 code units (except `from`, code points).',
    properties: {
      text: { ...request.properties.text, minLength: 1, maxLength: CAMPAIGN_LIMITS.textMaxCharacters, description: 'At least one non-whitespace character.' },
      from: { ...request.properties.from, minLength: 1, description: 'Sender ID, trimmed. Digits only: at most 20 digits, 50000-59999 reserved. Otherwise at most 11 characters.' },
      recipientInfo: { ...request.properties.recipientInfo, items: ref('Recipient'), description: 'At least 1 item, no maximum count.' },
      campaignName: { ...request.properties.campaignName, minLength: 1, maxLength: CAMPAIGN_LIMITS.campaignNameMaxCharacters, default: DEFAULT_CAMPAIGN_NAME },
      sendAt: {
        ...request.properties.sendAt,
        pattern: SEND_AT_PATTERN.source,
        description: 'Europe/Dublin local time (scheduling.timeZone), no zone designator or offset; seconds are dropped. Omitted or null: now.',
      },
      createAsDraft: { ...request.properties.createAsDraft, default: false },
      shouldSaveList: { ...request.properties.shouldSaveList, default: false },
    },
  },
  Recipient: {
    ...recipient,
    properties: {
      msisdn: { ...recipient.properties.msisdn, minLength: 1, maxLength: CAMPAIGN_LIMITS.msisdnMaxCharacters, description: "Digits with an optional leading '+'." },
      ClientReference: { ...recipient.properties.ClientReference, maxLength: CAMPAIGN_LIMITS.clientReferenceMaxCharacters },
    },
  },
  CreateCampaignResponse: {
    type: 'object',
    required: ['id', 'message'],
    properties: {
      id: { type: 'string', format: 'uuid' },
      message: { type: 'string', const: CAMPAIGN_ACCEPTED_MESSAGE },
    },
  },
  CampaignSummary: {
    type: 'object',
    required: ['totalSent', 'delivered', 'undelivered', 'pending'],
    properties: { totalSent: int32, delivered: int32, undelivered: int32, pending: int32 },
  },
  Problem: {
    type: 'object',
    description: 'RFC 9457 Problem Details (SPEC.md "Problem Details").',
    required: ['title', 'status', 'detail'],
    properties: {
      title: { type: 'string' },
      status: { type: 'integer', minimum: 400, maximum: 599 },
      detail: { type: 'string' },
      type: { type: ['string', 'null'] },
      instance: { type: ['string', 'null'] },
    },
  },
  TokenResponse: {
    type: 'object',
    description: 'SPEC.md "Token Response". Lifetimes come from the response, never assume them fixed.',
    required: ['access_token', 'expires_in', 'token_type'],
    properties: {
      access_token: { type: 'string' },
      expires_in: int32,
      token_type: { type: 'string', const: 'Bearer' },
      refresh_expires_in: int32,
      refresh_token: { type: 'string' },
      id_token: { type: 'string' },
      'not-before-policy': int32,
      session_state: { type: 'string' },
      scope: { type: 'string' },
    },
  },
  LegacyTokenResponse: {
    type: 'object',
    description: 'SPEC.md "Legacy v2: POST {legacy_auth_url}/token".',
    required: ['access_token', 'expires_in', 'refresh_expires_in', 'refresh_token', 'token_type', 'scope'],
    properties: {
      access_token: { type: 'string' },
      expires_in: int32,
      refresh_expires_in: int32,
      refresh_token: { type: 'string' },
      token_type: { type: 'string', const: 'Bearer' },
      scope: { type: 'string' },
    },
  },
  OAuthError: {
    type: 'object',
    description: 'RFC 6749 §5.2 (SPEC.md "OAuth Error").',
    required: ['error'],
    properties: {
      error: { type: 'string', examples: ['invalid_request', 'invalid_client', 'invalid_grant', 'unsupported_grant_type', 'temporarily_unavailable'] },
      error_description: { type: 'string' },
    },
  },
  PasswordGrant: {
    type: 'object',
    required: ['client_id', 'grant_type', 'username', 'password'],
    properties: {
      client_id: { type: 'string', description: '`messaging-api` (auth.clientId), or the legacy client id at the legacy endpoint.' },
      grant_type: { type: 'string', const: 'password' },
      username: { type: 'string', minLength: 1 },
      password: { type: 'string', minLength: 1 },
    },
  },
  RefreshGrant: {
    type: 'object',
    required: ['client_id', 'grant_type', 'refresh_token'],
    properties: {
      client_id: { type: 'string' },
      grant_type: { type: 'string', const: 'refresh_token' },
      refresh_token: { type: 'string', minLength: 1 },
    },
  },
  SenderEntry: {
    type: 'object',
    required: ['name', 'type'],
    properties: {
      name: { type: 'string', description: 'The Sender ID value.' },
      type: { type: 'integer', enum: [0, 1, 2], description: '0 registered with the national regulator, 1 international not approved by it, 2 numeric.' },
    },
  },
  LegacyError: {
    type: 'object',
    required: ['success', 'message', 'errors'],
    properties: {
      success: { type: 'boolean', const: false },
      message: { type: 'string' },
      errors: { type: 'array', items: { type: 'string' } },
    },
  },
  InboundMessage: {
    type: 'object',
    required: ['id', 'from', 'to', 'text', 'receivedAt', 'incomplete'],
    properties: {
      id: { type: 'string' },
      from: { type: 'string' },
      to: { type: 'string' },
      text: { type: 'string' },
      receivedAt: { type: 'string', format: 'date-time', description: 'ISO-8601, UTC.' },
      incomplete: { type: 'boolean', description: 'True when a multi-part message was delivered as what arrived.' },
    },
  },
  InboundPage: {
    type: 'object',
    required: ['messages', 'next'],
    properties: {
      messages: { type: 'array', items: ref('InboundMessage'), description: 'Newest last.' },
      next: { type: ['string', 'null'], description: 'Cursor for the next page; null when there is none.' },
    },
  },
  DeliveryReceipt: {
    type: 'object',
    description: 'SPEC.md "Delivery Receipt (webhook body)". Receivers ignore unknown extra properties.',
    required: ['To', 'From', 'Status', 'ClientReference'],
    properties: {
      To: { type: 'string' },
      From: { type: 'string' },
      Status: { type: 'string', maxLength: 30 },
      ClientReference: { type: ['string', 'null'], maxLength: 30 },
    },
  },
};

const responses: Record<string, OpenApiResponse> = {
  BearerChallenge: {
    description: 'Token missing, malformed, invalid, expired or revoked. No body.',
    headers: { 'WWW-Authenticate': { description: '`Bearer`', required: true, schema: { type: 'string', const: 'Bearer' } } },
  },
  Forbidden: problem(`Valid token, identity not a recognized client administrator (title \`Forbidden\`, detail \`${NOT_ADMINISTRATOR_DETAIL}\`).`),
  Unexpected: problem('Unexpected error; no internals are shown.'),
  Unavailable: { ...problem('The store refused the write, or too many request bytes are in flight (api.maxBufferedBytes). Nothing was accepted; retry.'), headers: retryAfter },
  StoreUnavailable: { ...problem('The database cannot serve now (unreachable, shutting down, disk full, busy). Retry after Retry-After.'), headers: retryAfter },
  ClientBusy: {
    ...problem('This client already sends api.maxUploadsPerClient bodies at once, or its bodies in flight hold api.maxBufferedBytesPerClient bytes. Nothing was accepted; retry.'),
    headers: retryAfter,
  },
  TooSlow: problem('The body arrived slower than api.minBodyBytesPerSecond on average after api.bodyRateGraceMs; the connection is closed. Nothing was accepted.'),
};

const tokenErrors = (): Record<string, OpenApiResponse> => ({
  '400': { description: 'invalid_request, unsupported_grant_type or invalid_grant.', content: json(ref('OAuthError')) },
  '401': { description: 'invalid_client: the client_id is not this endpoint\'s.', content: json(ref('OAuthError')) },
  '413': { description: 'The form is larger than 16 KiB.', content: json(ref('OAuthError')) },
  '429': { description: 'Too many failed attempts for the username or the client address.', headers: retryAfter, content: json(ref('OAuthError')) },
  '500': { description: 'server_error.', content: json(ref('OAuthError')) },
  '503': { description: 'temporarily_unavailable: the database cannot serve now (unreachable, full, busy).', headers: retryAfter, content: json(ref('OAuthError')) },
});

const tokenRequestBody = {
  required: true,
  content: { 'application/x-www-form-urlencoded': { schema: { oneOf: [ref('PasswordGrant'), ref('RefreshGrant')] } } },
};

export const OPENAPI_DOCUMENT: OpenApiDocument = {
  openapi: '3.1.0',
  info: {
    title: 'smsgate',
    version: '1.0.0',
    description: 'SMS Messaging Service Interface (SPEC.md): the v1 campaign API, the token endpoints, health, the delivery-receipt webhook, the legacy v2 sender list and token endpoint, and inbound messages.',
    license: { name: 'MIT', identifier: 'MIT' },
  },
  jsonSchemaDialect: 'https://spec.openapis.org/oas/3.1/dialect/base',
  tags: [
    { name: 'campaigns', description: 'Campaign API version 1' },
    { name: 'auth', description: 'Token endpoints' },
    { name: 'legacy', description: 'Legacy v2 API' },
    { name: 'inbound', description: 'Messages from phones' },
    { name: 'service', description: 'Health and this document' },
  ],
  paths: {
    '/health': {
      get: {
        operationId: 'getHealth', summary: 'Service availability', tags: ['service'], security: [],
        responses: { '200': { description: 'The service is available.', content: { 'text/plain': { schema: { type: 'string', const: 'Healthy' } } } } },
      },
    },
    '/openapi.json': {
      get: {
        operationId: 'getOpenApi', summary: 'This document', tags: ['service'], security: [],
        responses: { '200': { description: 'The OpenAPI 3.1 document.', content: json({ type: 'object', required: ['openapi', 'paths'] }) } },
      },
    },
    '/v1/campaign': {
      post: {
        operationId: 'createCampaign', summary: 'Create a campaign', tags: ['campaigns'], security: BEARER_CURRENT,
        description: 'Accepting reserves the campaign\'s most it can cost (recipients x parts of the text x the price of a part to each, config `pricing`) from '
          + 'the client\'s credits, with the campaign, before the 202; a client without a balance is unlimited. A draft reserves nothing. '
          + `With an \`${IDEMPOTENCY_KEY_HEADER}\` the same request (same client, key and body bytes) within 24 hours answers the first 202 and id again, `
          + 'creating and reserving nothing more.',
        parameters: [{
          name: IDEMPOTENCY_KEY_HEADER, in: 'header', required: false,
          description: 'IETF httpapi draft "The Idempotency-Key HTTP Header Field": a key of the client\'s choosing, 1 to 255 printable ASCII characters, '
            + 'unique per request; kept per client for 24 hours. A retry with the same key and body never creates a second campaign.',
          schema: { type: 'string', minLength: 1, maxLength: 255, pattern: '^[\\x20-\\x7E]+$' },
        }],
        requestBody: { required: true, content: json(ref('CreateCampaignRequest')) },
        responses: {
          '202': { description: 'Received to be processed (not yet created); with an Idempotency-Key already used for this body, the first request\'s answer.', content: json(ref('CreateCampaignResponse')) },
          '400': problem(`Title \`${VALIDATION_TITLE}\`; the detail names every failing field (the first 20, then how many in all), or a malformed `
            + `\`${IDEMPOTENCY_KEY_HEADER}\` header, or too few credits: \`not enough credits: the campaign needs N credits and M are available\` (nothing is stored).`),
          '401': responseRef('BearerChallenge'),
          '403': responseRef('Forbidden'),
          '408': responseRef('TooSlow'),
          '409': { ...problem(`A request with the same \`${IDEMPOTENCY_KEY_HEADER}\` is still being processed (title \`Conflict\`); retry once it has been answered.`), headers: retryAfter },
          '413': problem('The body is larger than api.maxBodyBytes.'),
          '422': problem(`The \`${IDEMPOTENCY_KEY_HEADER}\` was already used by this client with a different request body (title \`Unprocessable Content\`).`),
          '429': responseRef('ClientBusy'),
          '500': responseRef('Unexpected'),
          '503': responseRef('Unavailable'),
        },
      },
    },
    '/v1/campaign/{id}': {
      get: {
        operationId: 'getCampaignSummary', summary: 'Campaign summary', tags: ['campaigns'], security: BEARER_CURRENT,
        parameters: [{ name: 'id', in: 'path', required: true, description: 'The id returned on acceptance.', schema: { type: 'string', format: 'uuid' } }],
        responses: {
          '200': { description: 'The summary of a ready campaign.', content: json(ref('CampaignSummary')) },
          '400': problem('The id is not a UUID.'),
          '401': responseRef('BearerChallenge'),
          '403': responseRef('Forbidden'),
          '404': problem('Unknown, another account\'s, a draft, or still processing.'),
          '500': responseRef('Unexpected'),
          '503': responseRef('StoreUnavailable'),
        },
      },
    },
    '/v1/inbound': {
      get: {
        operationId: 'listInboundMessages', summary: 'Inbound messages of the account', tags: ['inbound'], security: BEARER_CURRENT,
        parameters: [
          { name: 'since', in: 'query', description: 'Only messages received at or after this instant (ISO-8601).', schema: { type: 'string', format: 'date-time' } },
          { name: 'limit', in: 'query', description: 'At most this many messages.', schema: { type: 'integer', minimum: 1 } },
        ],
        responses: {
          '200': { description: 'The account\'s messages, newest last.', content: json(ref('InboundPage')) },
          '400': problem(`Title \`${VALIDATION_TITLE}\`; a query parameter is invalid.`),
          '401': responseRef('BearerChallenge'),
          '403': responseRef('Forbidden'),
          '500': responseRef('Unexpected'),
          '503': responseRef('StoreUnavailable'),
        },
      },
    },
    '/auth/token': {
      post: {
        operationId: 'issueToken', summary: 'OAuth 2.0 token endpoint (client_id messaging-api)', tags: ['auth'], security: [],
        description: 'Password grant (RFC 6749 §4.3) and refresh grant (§6). Every response has Cache-Control: no-store.',
        requestBody: tokenRequestBody,
        responses: { '200': { description: 'Issued.', content: json(ref('TokenResponse')) }, ...tokenErrors() },
      },
    },
    '/legacy/auth/token': {
      post: {
        operationId: 'issueLegacyToken', summary: 'Legacy v2 token endpoint (the legacy client id)', tags: ['legacy', 'auth'], security: [],
        requestBody: tokenRequestBody,
        responses: { '200': { description: 'Issued: 120 s access, 1,200 s refresh by default.', content: json(ref('LegacyTokenResponse')) }, ...tokenErrors() },
      },
    },
    '/api/v2/senderlist': {
      get: {
        operationId: 'listSenders', summary: 'Sender IDs of the account (legacy v2)', tags: ['legacy'],
        security: [{ legacyAccessToken: [] }, { personalAccessToken: [] }, { accessToken: [] }],
        responses: {
          '200': { description: 'The account\'s sender IDs.', content: json({ type: 'array', items: ref('SenderEntry') }) },
          '401': { description: 'Unauthorized.', content: json(ref('LegacyError')) },
          '403': { description: 'Not a recognized client administrator.', content: json(ref('LegacyError')) },
          '500': responseRef('Unexpected'),
          '503': responseRef('StoreUnavailable'),
        },
      },
    },
  },
  webhooks: {
    deliveryReceipt: {
      post: {
        operationId: 'deliveryReceipt', summary: 'A delivery receipt, POSTed to the client\'s webhook URL', tags: ['campaigns'],
        parameters: [
          { name: 'X-Signature', in: 'header', description: 'sha256=<HMAC-SHA256 of the raw body with the client\'s secret>, when one is configured.', schema: { type: 'string', pattern: '^sha256=[0-9a-f]{64}$' } },
          { name: 'X-Event-Id', in: 'header', description: 'Stable across retries, redrives and replays: deduplicate on it.', schema: { type: 'string' } },
        ],
        requestBody: { required: true, content: json(ref('DeliveryReceipt')) },
        responses: { '2XX': { description: 'Acknowledged; not retried.' } },
      },
    },
  },
  components: {
    schemas,
    responses,
    securitySchemes: {
      personalAccessToken: { type: 'http', scheme: 'bearer', description: 'A personal access token, `<auth.patPrefix>_pat_` and 43 base62 characters (`smsgate token create`).' },
      accessToken: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT', description: 'An ES256 JWT from POST /auth/token (client_id messaging-api).' },
      legacyAccessToken: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT', description: 'A JWT from POST /legacy/auth/token (the legacy client id).' },
      messagingApiOAuth: {
        type: 'oauth2',
        description: 'How accessToken is obtained.',
        flows: { password: { tokenUrl: '/auth/token', refreshUrl: '/auth/token', scopes: {} } },
      },
    },
  },
};

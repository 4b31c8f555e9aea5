/** Authentication: bearer tokens to identities, the OAuth token endpoints, account administration. */
export { AuthService, PAT_LAST_USED_INTERVAL_MS, REFRESH_PURGE_INTERVAL_MS } from './auth-service.js';
export type { Audience, AuthServiceOptions, BearerFailure, BearerResult, Identity } from './auth-service.js';
export { SENDER_TYPES, checkWebhookUrl } from './accounts.js';
export type { AddedSender, CreatedClient, CreatedUser, IssuedPat, SenderType } from './accounts.js';
export { authRouter, TOKEN_PATHS } from './koa.js';
export type { TokenEndpointKind, TokenForm, TokenResponse } from './token-endpoint.js';
export { DEFAULT_SCRYPT_COST, hashPassword, verifyPassword } from './password.js';
export type { ScryptCost } from './password.js';
export { generatePat, hashPat, isWellFormedPat } from './pat.js';

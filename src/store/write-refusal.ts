/**
 * The names the auth and campaign modules have long used for "the store refused for a reason
 * outside the request" (busy, full, read-only, unreachable): callers answer those "try again later"
 * (HTTP 503 with Retry-After), never 500. The classification itself is write-failures.ts's, once,
 * for SQLite and PostgreSQL alike; these are that function under its older names.
 */
export { isTransientPostgresFailure as isPostgresRefusal, isTransientStoreFailure as isStoreWriteRefusal } from './write-failures.js';

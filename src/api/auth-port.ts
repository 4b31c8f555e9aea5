/**
 * What the routes need from authentication: the two calls of src/auth's AuthService that turn a
 * bearer header into an identity and decide 403. Narrow on purpose, so a route cannot issue tokens.
 */
import type { AuthService, Identity } from '../auth/index.js';

export type ApiAuthenticator = Pick<AuthService, 'authenticate' | 'isRecognizedAdministrator'>;
export type ApiIdentity = Identity;

/**
 * What the API needs from authentication: the shape of src/auth's AuthService (wave-2 contract),
 * declared here so the routes depend on a narrow interface rather than on the whole service.
 */
export interface ApiIdentity {
  userId: number;
  clientId: number;
  clientName: string;
  username: string;
  isAdmin: boolean;
}

export type ApiBearerResult =
  | { ok: true; identity: ApiIdentity; via: string }
  | { ok: false; reason: 'missing' | 'malformed' | 'invalid' | 'expired' | 'revoked' };

export interface ApiAuthenticator {
  /** 'current' for /v1; 'legacy' for /api/v2 (accepts legacy JWTs as well as current credentials). */
  authenticate(authorizationHeader: string | undefined, audience: 'current' | 'legacy'): Promise<ApiBearerResult>;
  /** User active and an administrator of an active client. */
  isRecognizedAdministrator(identity: ApiIdentity): boolean;
}

/**
 * The JWT signing keys: an ES256 (ECDSA P-256, RFC 7518 §3.4) key pair made on first start and kept
 * in `signing_keys`, the private JWK sealed with the SecretBox so the database file alone cannot
 * mint tokens. Several processes may share the store (serve and an admin command); a token signed
 * with a key this process has not loaded yet makes it reload the table once.
 */
import { randomUUID } from 'node:crypto';
import { exportJWK, generateKeyPair, importJWK, type CryptoKey, type JWK } from 'jose';
import { GatewayError } from '../common/errors.js';
import type { AuthStore } from '../store/sqlite/auth-store.js';
import type { Async } from '../store/ports.js';
import type { SecretBox } from '../store/secret-box.js';

export const JWT_ALGORITHM = 'ES256';

interface LoadedKey {
  kid: string;
  publicKey: CryptoKey;
  /** Only keys not retired can sign. */
  privateKey: CryptoKey | undefined;
}

export class SigningKeyRing {
  private readonly keys = new Map<string, LoadedKey>();
  private signingKid: string | undefined;

  private constructor(private readonly store: Async<AuthStore>, private readonly secretBox: SecretBox) {}

  /** Loads the stored keys, creating the first one when there is none. */
  static async open(store: Async<AuthStore>, secretBox: SecretBox, nowMs: number): Promise<SigningKeyRing> {
    const ring = new SigningKeyRing(store, secretBox);
    await ring.reload();
    if (ring.signingKid === undefined) {
      await ring.createKey(nowMs);
      await ring.reload();
    }
    return ring;
  }

  /** The key new tokens are signed with: the newest key that is not retired. */
  signingKey(): { kid: string; privateKey: CryptoKey } {
    const key = this.signingKid === undefined ? undefined : this.keys.get(this.signingKid);
    if (key?.privateKey === undefined) throw new GatewayError('SIGNING_KEY_MISSING', 'no JWT signing key is available');
    return { kid: key.kid, privateKey: key.privateKey };
  }

  /** The public key for a token's `kid`, reloading the table once for a kid made by another process. */
  async verificationKey(kid: string | undefined): Promise<CryptoKey | undefined> {
    if (kid === undefined) return undefined;
    if (!this.keys.has(kid)) await this.reload();
    return this.keys.get(kid)?.publicKey;
  }

  private async createKey(nowMs: number): Promise<void> {
    const { publicKey, privateKey } = await generateKeyPair(JWT_ALGORITHM, { extractable: true });
    const kid = randomUUID();
    await this.store.insertSigningKey({
      kid,
      alg: JWT_ALGORITHM,
      private_jwk_enc: this.secretBox.seal(JSON.stringify(await exportJWK(privateKey))),
      public_jwk: JSON.stringify(await exportJWK(publicKey)),
      created_at: nowMs,
    });
  }

  private async reload(): Promise<void> {
    let newestUsable: string | undefined;
    for (const row of await this.store.signingKeys()) {
      if (row.alg !== JWT_ALGORITHM) continue;
      const known = this.keys.get(row.kid);
      const retired = row.retired_at !== null;
      if (known === undefined || (retired && known.privateKey !== undefined)) {
        const publicKey = (await importJWK(JSON.parse(row.public_jwk) as JWK, JWT_ALGORITHM)) as CryptoKey;
        const privateKey = retired
          ? undefined
          : ((await importJWK(JSON.parse(this.secretBox.open(row.private_jwk_enc)) as JWK, JWT_ALGORITHM)) as CryptoKey);
        this.keys.set(row.kid, { kid: row.kid, publicKey, privateKey });
      }
      // Rows come oldest first, so the last usable one is the newest.
      if (!retired) newestUsable = row.kid;
    }
    this.signingKid = newestUsable;
  }
}

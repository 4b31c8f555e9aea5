/**
 * The endpoints' webhook secrets, opened once: each sealed secret is opened with the key file the
 * first time an event of its client is signed, and kept (at most SECRET_CACHE_LIMIT, then the cache
 * starts over) so the hot path signs without decrypting.
 */
import type { Logger } from '../common/log.js';
import type { SecretBox } from '../store/secret-box.js';

const SECRET_CACHE_LIMIT = 1024;

export class SecretCache {
  private readonly secrets = new Map<string, string>();

  constructor(
    private readonly box: SecretBox,
    private readonly logger: Logger,
  ) {}

  /** The secret sealed in `sealed`; null (logged) when it does not open with this key file. */
  open(sealed: string): string | null {
    const cached = this.secrets.get(sealed);
    if (cached !== undefined) return cached;
    try {
      const secret = this.box.open(sealed);
      if (this.secrets.size >= SECRET_CACHE_LIMIT) this.secrets.clear();
      this.secrets.set(sealed, secret);
      return secret;
    } catch (err) {
      this.logger.error({ code: (err as { code?: string }).code }, 'webhook secret does not open with this key file');
      return null;
    }
  }
}

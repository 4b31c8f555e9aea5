/**
 * The bytes of request bodies held in memory across all requests in flight, bounded by
 * `api.maxBufferedBytes` (four concurrent 60 MiB POSTs once reached 1.3 GB), and each client's
 * share of them, so that one client can never take the whole budget and starve the others (four
 * slow uploads declaring 64 MiB from one tenant once held all 256 MiB and every other tenant got
 * 503 for five minutes):
 * - `api.maxUploadsPerClient` bodies of one client read at once (its next one is answered 429);
 * - `api.maxBufferedBytesPerClient` bytes reserved by one client's bodies at once (429 past it);
 * - `api.maxBufferedBytes` across everyone (503 past it, as before: not this client's doing).
 * A client is the authenticated account (its client id), whatever token or connection it uses.
 *
 * Each request takes a lease, adds bytes to it as they are reserved, and releases it when its
 * handler is done (parsed, validated and stored), so the bound covers the whole life of the large
 * objects a body turns into, not only the raw bytes. A request that would pass a bound is refused
 * before anything more of it is kept.
 */
/** Four request bodies of the default api.maxBodyBytes (64 MiB) at once. */
export const DEFAULT_MAX_BUFFERED_BYTES = 256 * 1024 * 1024;
/** Bodies one client may have in flight at once. */
export const DEFAULT_MAX_UPLOADS_PER_CLIENT = 4;
/** One client's share when api.maxBufferedBytesPerClient is left out: half the total. */
export const DEFAULT_CLIENT_SHARE_DIVISOR = 2;

export interface BodyBudgetLimits {
  maxBufferedBytes: number;
  maxBufferedBytesPerClient: number;
  maxUploadsPerClient: number;
}

/** The limits from the `api` config section, its left-out keys at their defaults. */
export function bodyBudgetLimits(api: { maxBufferedBytes?: number; maxBufferedBytesPerClient?: number; maxUploadsPerClient?: number }): BodyBudgetLimits {
  const maxBufferedBytes = api.maxBufferedBytes ?? DEFAULT_MAX_BUFFERED_BYTES;
  return {
    maxBufferedBytes,
    maxBufferedBytesPerClient: api.maxBufferedBytesPerClient ?? Math.max(1, Math.floor(maxBufferedBytes / DEFAULT_CLIENT_SHARE_DIVISOR)),
    maxUploadsPerClient: api.maxUploadsPerClient ?? DEFAULT_MAX_UPLOADS_PER_CLIENT,
  };
}

/** Why bytes could not be reserved: the client's own share, or the total across clients. */
export type Reservation = 'reserved' | 'client-full' | 'total-full';

interface ClientUse {
  uploads: number;
  bytes: number;
}

export class BodyBudget {
  private inFlightBytes = 0;
  private readonly clients = new Map<string, ClientUse>();

  constructor(readonly limits: BodyBudgetLimits) {}

  get maxBufferedBytes(): number {
    return this.limits.maxBufferedBytes;
  }

  /** Bytes currently held by leases. */
  get bufferedBytes(): number {
    return this.inFlightBytes;
  }

  /** What one client holds now (zero when nothing). */
  clientUse(clientKey: string): Readonly<ClientUse> {
    return this.clients.get(clientKey) ?? { uploads: 0, bytes: 0 };
  }

  /** A lease for one more body of `clientKey`; undefined when that client already has maxUploadsPerClient. */
  lease(clientKey: string): BodyLease | undefined {
    const use = this.clients.get(clientKey) ?? { uploads: 0, bytes: 0 };
    if (use.uploads >= this.limits.maxUploadsPerClient) return undefined;
    use.uploads += 1;
    this.clients.set(clientKey, use);
    return new BodyLease(this, clientKey);
  }

  /** @internal used by BodyLease */
  tryTake(clientKey: string, bytes: number): Reservation {
    const use = this.clients.get(clientKey);
    if (use === undefined) return 'total-full';
    // The total first: past it the gateway is busy whoever asks (503), as it was before shares.
    if (this.inFlightBytes + bytes > this.limits.maxBufferedBytes) return 'total-full';
    if (use.bytes + bytes > this.limits.maxBufferedBytesPerClient) return 'client-full';
    this.inFlightBytes += bytes;
    use.bytes += bytes;
    return 'reserved';
  }

  /** @internal used by BodyLease: gives the bytes back and ends the upload. */
  giveBack(clientKey: string, bytes: number): void {
    this.inFlightBytes -= bytes;
    const use = this.clients.get(clientKey);
    if (use === undefined) return;
    use.bytes -= bytes;
    use.uploads -= 1;
    if (use.uploads <= 0) this.clients.delete(clientKey);
  }
}

export class BodyLease {
  private heldBytes = 0;
  private released = false;

  constructor(private readonly budget: BodyBudget, private readonly clientKey: string) {}

  get bytes(): number {
    return this.heldBytes;
  }

  /** Reserves `bytes` more; anything but 'reserved' means nothing was reserved. */
  reserve(bytes: number): Reservation {
    if (this.released) return 'total-full';
    const result = this.budget.tryTake(this.clientKey, bytes);
    if (result === 'reserved') this.heldBytes += bytes;
    return result;
  }

  /** Idempotent: a lease gives its bytes and its upload slot back once. */
  release(): void {
    if (this.released) return;
    this.released = true;
    this.budget.giveBack(this.clientKey, this.heldBytes);
    this.heldBytes = 0;
  }
}

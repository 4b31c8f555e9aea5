/**
 * The bytes of request bodies held in memory across all requests in flight, bounded by
 * `api.maxBufferedBytes` (issue 9 item 3: four concurrent 60 MiB POSTs reached 1.3 GB). Each request
 * takes a lease, adds bytes to it as they are reserved, and releases it when its handler is done
 * (parsed, validated and stored), so the bound covers the whole life of the large objects a body
 * turns into, not only the raw bytes. A request that would pass the bound is refused with 503 and
 * Retry-After before anything more of it is kept.
 */
/** Four request bodies of the default api.maxBodyBytes (64 MiB) at once. */
export const DEFAULT_MAX_BUFFERED_BYTES = 256 * 1024 * 1024;

export class BodyBudget {
  private inFlightBytes = 0;

  constructor(readonly maxBufferedBytes: number) {}

  /** Bytes currently held by leases. */
  get bufferedBytes(): number {
    return this.inFlightBytes;
  }

  lease(): BodyLease {
    return new BodyLease(this);
  }

  /** @internal used by BodyLease */
  tryTake(bytes: number): boolean {
    if (this.inFlightBytes + bytes > this.maxBufferedBytes) return false;
    this.inFlightBytes += bytes;
    return true;
  }

  /** @internal used by BodyLease */
  giveBack(bytes: number): void {
    this.inFlightBytes -= bytes;
  }
}

export class BodyLease {
  private heldBytes = 0;
  private released = false;

  constructor(private readonly budget: BodyBudget) {}

  get bytes(): number {
    return this.heldBytes;
  }

  /** Reserves `bytes` more; false (nothing reserved) when the budget cannot take them. */
  reserve(bytes: number): boolean {
    if (this.released || !this.budget.tryTake(bytes)) return false;
    this.heldBytes += bytes;
    return true;
  }

  /** Idempotent: a lease gives its bytes back once. */
  release(): void {
    if (this.released) return;
    this.released = true;
    this.budget.giveBack(this.heldBytes);
    this.heldBytes = 0;
  }
}

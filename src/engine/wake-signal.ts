/**
 * A loop's sleep that a wake() cuts short: the scheduler and the transport lanes sleep for their
 * poll interval unless new work (a ready campaign, a bound transport, a stop) wakes them.
 */
export class WakeSignal {
  private wakeUp: (() => void) | undefined;
  private pending = false;

  wake(): void {
    if (this.wakeUp === undefined) {
      this.pending = true;
      return;
    }
    const wakeUp = this.wakeUp;
    this.wakeUp = undefined;
    wakeUp();
  }

  /** Resolves after timeoutMs, or earlier on wake(); at once if woken since the last wait. */
  wait(timeoutMs: number): Promise<void> {
    if (this.pending) {
      this.pending = false;
      return Promise.resolve();
    }
    return new Promise((resolve) => {
      const wakeUp = (): void => {
        clearTimeout(timer);
        resolve();
      };
      const timer = setTimeout(() => {
        // A later wait may have replaced this one (a loop that raced the wait against something
        // else and moved on); only clear our own.
        if (this.wakeUp === wakeUp) this.wakeUp = undefined;
        resolve();
      }, timeoutMs);
      this.wakeUp = wakeUp;
    });
  }
}

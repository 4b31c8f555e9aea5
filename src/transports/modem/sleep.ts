/** Resolves after `ms` milliseconds (a timer that keeps the process alive, as a pending wait should). */
export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, Math.max(0, ms)));
}

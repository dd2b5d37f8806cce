/**
 * The generations of this instance that were admitted and have not written their outcome yet:
 * each holds a reservation here. The shutdown waits for none to be left before it closes the
 * store (`whenSettled`); metrics read the count.
 */
export class UnsettledGenerations {
  private count = 0;
  private waiters: Array<() => void> = [];

  get size(): number {
    return this.count;
  }

  /** A generation was admitted (its billing opened). */
  add(): void {
    this.count++;
  }

  /** A generation's outcome was handed to the store. */
  remove(): void {
    this.count--;
    if (this.count === 0 && this.waiters.length > 0) {
      const waiters = this.waiters;
      this.waiters = [];
      for (const wake of waiters) wake();
    }
  }

  /** Resolves true once none is left, or false after `timeoutMs`. */
  whenSettled(timeoutMs: number): Promise<boolean> {
    if (this.count === 0) return Promise.resolve(true);
    return new Promise<boolean>((resolve) => {
      const wake = () => {
        clearTimeout(timer);
        resolve(true);
      };
      const timer = setTimeout(() => {
        this.waiters = this.waiters.filter((waiter) => waiter !== wake);
        resolve(false);
      }, timeoutMs);
      this.waiters.push(wake);
    });
  }
}

/** Races a dependency call against a timer, so no caller waits on a stalled database or disk forever. */

export class DeadlineExceededError extends Error {
  constructor(what: string, milliseconds: number) {
    super(`${what} did not finish within ${milliseconds} ms`);
    this.name = "DeadlineExceededError";
  }
}

/** The underlying call is not cancelled: callers must only race operations that are safe to repeat. */
export function withDeadline<T>(promise: Promise<T>, milliseconds: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new DeadlineExceededError(what, milliseconds)), milliseconds);
  });
  return Promise.race([promise, deadline]).finally(() => clearTimeout(timer));
}

/**
 * Hard-purges expired playground keys on a timer. Every
 * instance runs it; the DELETE is idempotent, so overlapping runs only find less to delete.
 * An expired key is refused by authentication on its own (expiry and the consume condition), so
 * the purge interval bounds only how long the dead row exists, not how long the key works.
 */
import type { AuthStore } from "./ports.js";

export interface PlaygroundKeyPurge {
  /** One purge now; resolves with the number of keys deleted. */
  runNow(): Promise<number>;
  stop(): Promise<void>;
}

export function startPlaygroundKeyPurge(
  store: Pick<AuthStore, "playgroundKeys">,
  options: { intervalMs: number; onError?: (error: Error) => void; onPurged?: (count: number) => void },
): PlaygroundKeyPurge {
  let running: Promise<number> | undefined;
  let stopped = false;

  const runNow = (): Promise<number> => {
    running ??= store.playgroundKeys
      .purgeExpired()
      .then((count) => {
        if (count > 0) options.onPurged?.(count);
        return count;
      })
      .finally(() => {
        running = undefined;
      });
    return running;
  };
  const tick = () => {
    if (!stopped) runNow().catch((error: Error) => options.onError?.(error));
  };
  const timer = setInterval(tick, options.intervalMs);
  // The purge must never keep a stopping process alive.
  timer.unref();
  tick();

  return {
    runNow,
    async stop() {
      stopped = true;
      clearInterval(timer);
      await running?.catch(() => {});
    },
  };
}

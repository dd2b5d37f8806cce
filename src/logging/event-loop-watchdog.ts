/**
 * Logs every stall of the event loop longer than a threshold: while the loop is held, no request
 * is read, no timer fires and no probe answers, so a stall is the first thing to look for when an
 * instance was slow or unready. A timer ticks every `tickMs`; a tick that comes late by more than
 * the threshold was held up by whatever ran meanwhile, and is logged once the loop runs again
 * (a thread cannot report its own stall while it lasts).
 */
import type { Logger } from "./logger.js";

export interface EventLoopWatchdog {
  stop(): void;
}

/** `thresholdMs` 0 turns the watchdog off. */
export function startEventLoopWatchdog(logger: Logger, thresholdMs: number): EventLoopWatchdog {
  if (thresholdMs <= 0) return { stop() {} };
  // Often enough that a stall just over the threshold is seen as one; rare enough to cost nothing.
  const tickMs = Math.max(10, Math.min(100, Math.floor(thresholdMs / 2)));
  let last = performance.now();
  const timer = setInterval(() => {
    const now = performance.now();
    const stalledMs = now - last - tickMs;
    last = now;
    if (stalledMs > thresholdMs) {
      logger.warn({ stalledMs: Math.round(stalledMs), thresholdMs }, "event loop stalled");
    }
  }, tickMs);
  // The watchdog alone must not keep a finished process alive.
  timer.unref();
  return {
    stop() {
      clearInterval(timer);
    },
  };
}

/**
 * The spend windows of a key at one instant, in UTC: the day (resets 00:00), the month (resets on
 * the 1st at 00:00) and the total window (reset only by hand). Which instant is decided by the one
 * clock of the limits (Redis TIME, or the process clock in embedded mode); the guard re-computes
 * the windows when that clock disagrees with the one used here.
 */

export interface LimitWindow {
  /** Stable name of the window, part of its counter's key: `d20260521`, `m202605`, `t0`. */
  id: string;
  /** Unix milliseconds, inclusive. */
  startMs: number;
  /** Unix milliseconds, exclusive; null for the total window, which has no end. */
  endMs: number | null;
}

export interface LimitWindows {
  daily: LimitWindow;
  monthly: LimitWindow;
  total: LimitWindow;
}

export function computeLimitWindows(nowMs: number, totalResetAt: Date | null): LimitWindows {
  const now = new Date(nowMs);
  const year = now.getUTCFullYear();
  const month = now.getUTCMonth();
  const day = now.getUTCDate();
  const pad = (value: number) => String(value).padStart(2, "0");
  const resetMs = totalResetAt?.getTime() ?? 0;
  return {
    daily: {
      id: `d${year}${pad(month + 1)}${pad(day)}`,
      startMs: Date.UTC(year, month, day),
      endMs: Date.UTC(year, month, day + 1),
    },
    monthly: {
      id: `m${year}${pad(month + 1)}`,
      startMs: Date.UTC(year, month, 1),
      endMs: Date.UTC(year, month + 1, 1),
    },
    // A reset opens a new window with a new counter; requests admitted before it still settle into
    // the old one, which is what Postgres says too (their created_at is before the reset).
    total: { id: `t${resetMs}`, startMs: resetMs, endMs: null },
  };
}

/** true when `nowMs` falls inside the day and month windows (so they are the current ones). */
export function isWithinWindows(windows: LimitWindows, nowMs: number): boolean {
  return (
    nowMs >= windows.daily.startMs &&
    nowMs < windows.daily.endMs! &&
    nowMs >= windows.monthly.startMs &&
    nowMs < windows.monthly.endMs!
  );
}

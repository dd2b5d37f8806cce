/**
 * IANA time zones with nothing but `Intl` (the ICU data Node ships): validating a zone name,
 * reading the wall clock and UTC offset of a zone at an instant, and finding the instant a wall
 * clock time denotes, with daylight-saving gaps and overlaps resolved as Temporal's `compatible`
 * mode does (a time skipped by a gap moves forward by the gap; a repeated time takes the earlier
 * instant).
 */

export interface WallClock {
  year: number;
  /** 1–12 */
  month: number;
  day: number;
  hour: number;
  minute: number;
  second: number;
}

export interface ZonedDateTime extends WallClock {
  timezone: string;
  /** Offset from UTC in seconds (east positive); whole minutes except for old local mean times. */
  offsetSeconds: number;
  /** `Monday` … `Sunday`. */
  weekday: string;
}

export type WallClockResolution =
  | { epochMs: number; adjustment: "none" }
  /** The wall time does not exist (clocks jumped forward); `shiftSeconds` is how far it moved. */
  | { epochMs: number; adjustment: "gap"; shiftSeconds: number }
  /** The wall time happened twice (clocks went back); the earlier instant was taken. */
  | { epochMs: number; adjustment: "overlap" };

const MAX_CACHED_ZONES = 1024;
const formatters = new Map<string, Intl.DateTimeFormat>();
const canonicalNames = new Map<string, string | null>();
const WEEKDAYS = ["Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"];
const DAY_MS = 86_400_000;

/**
 * The zone's canonical spelling (`europe/paris` → `Europe/Paris`, `utc` → `UTC`), or null when the
 * name is not a time zone ICU knows. Offsets such as `+01:00` are not zones and get null.
 */
export function resolveTimeZone(name: string): string | null {
  const cached = canonicalNames.get(name);
  if (cached !== undefined) return cached;
  let canonical: string | null = null;
  if (name.length > 0 && name.length <= 64 && /^[A-Za-z][A-Za-z0-9_+\-/]*$/.test(name)) {
    try {
      canonical = new Intl.DateTimeFormat("en-US", { timeZone: name }).resolvedOptions().timeZone;
    } catch {
      canonical = null;
    }
  }
  if (canonicalNames.size >= MAX_CACHED_ZONES) canonicalNames.clear();
  canonicalNames.set(name, canonical);
  return canonical;
}

/** Wall clock, offset and weekday of `timezone` (a canonical name) at `epochMs`. */
export function getZonedDateTime(timezone: string, epochMs: number): ZonedDateTime {
  const wall = readWallClock(timezone, epochMs);
  const wholeSecondMs = Math.floor(epochMs / 1000) * 1000;
  const offsetSeconds = Math.round((toEpochMsAsUtc(wall) - wholeSecondMs) / 1000);
  const weekday = WEEKDAYS[new Date(toEpochMsAsUtc(wall)).getUTCDay()];
  return {
    year: wall.year,
    month: wall.month,
    day: wall.day,
    hour: wall.hour,
    minute: wall.minute,
    second: wall.second,
    timezone,
    offsetSeconds,
    weekday,
  };
}

/** The instant a wall-clock time in `timezone` denotes (see the module comment for gaps and overlaps). */
export function resolveWallClock(timezone: string, wall: WallClock): WallClockResolution {
  const asUtc = toEpochMsAsUtc(wall);
  const before = offsetAt(timezone, asUtc - DAY_MS);
  const after = offsetAt(timezone, asUtc + DAY_MS);
  const valid = [...new Set([before, after])]
    .map((offset) => asUtc - offset * 1000)
    .filter((candidate) => toEpochMsAsUtc(readWallClock(timezone, candidate)) === asUtc)
    .sort((a, b) => a - b);
  if (valid.length === 1) return { epochMs: valid[0], adjustment: "none" };
  if (valid.length > 1) return { epochMs: valid[0], adjustment: "overlap" };
  // Skipped by a forward jump: read with the offset in force before it, which lands after the jump.
  return { epochMs: asUtc - before * 1000, adjustment: "gap", shiftSeconds: after - before };
}

/** True when `epochMs` is in the zone's daylight-saving time (its offset exceeds the year's smaller one). */
export function isDaylightSavingTime(timezone: string, epochMs: number, year: number): boolean {
  const january = offsetAt(
    timezone,
    toEpochMsAsUtc({ year, month: 1, day: 1, hour: 12, minute: 0, second: 0 }),
  );
  const july = offsetAt(timezone, toEpochMsAsUtc({ year, month: 7, day: 1, hour: 12, minute: 0, second: 0 }));
  return offsetAt(timezone, epochMs) > Math.min(january, july);
}

/** `+02:00`, `-03:30`, `+00:09:21` (seconds only when there are any). */
export function formatUtcOffset(offsetSeconds: number): string {
  const sign = offsetSeconds < 0 ? "-" : "+";
  const total = Math.abs(offsetSeconds);
  const hours = Math.floor(total / 3600);
  const minutes = Math.floor((total % 3600) / 60);
  const seconds = total % 60;
  const base = `${sign}${pad(hours)}:${pad(minutes)}`;
  return seconds === 0 ? base : `${base}:${pad(seconds)}`;
}

/** ISO 8601 local time with its offset: `2024-03-31T03:30:00+02:00`. */
export function formatZonedDateTime(zoned: ZonedDateTime): string {
  return `${formatWallClock(zoned)}${formatUtcOffset(zoned.offsetSeconds)}`;
}

export function formatWallClock(wall: WallClock): string {
  return `${String(wall.year).padStart(4, "0")}-${pad(wall.month)}-${pad(wall.day)}T${pad(wall.hour)}:${pad(wall.minute)}:${pad(wall.second)}`;
}

/** The wall clock read as if it were UTC, in epoch milliseconds (years 1–99 included). */
export function toEpochMsAsUtc(wall: WallClock): number {
  const date = new Date(0);
  date.setUTCFullYear(wall.year, wall.month - 1, wall.day);
  date.setUTCHours(wall.hour, wall.minute, wall.second, 0);
  return date.getTime();
}

function offsetAt(timezone: string, epochMs: number): number {
  return getZonedDateTime(timezone, epochMs).offsetSeconds;
}

function readWallClock(timezone: string, epochMs: number): WallClock {
  const parts: Record<string, string> = {};
  for (const part of getFormatter(timezone).formatToParts(epochMs)) parts[part.type] = part.value;
  return {
    year: Number(parts.year),
    month: Number(parts.month),
    day: Number(parts.day),
    hour: Number(parts.hour),
    minute: Number(parts.minute),
    second: Number(parts.second),
  };
}

function getFormatter(timezone: string): Intl.DateTimeFormat {
  let formatter = formatters.get(timezone);
  if (formatter === undefined) {
    formatter = new Intl.DateTimeFormat("en-US", {
      timeZone: timezone,
      hourCycle: "h23",
      year: "numeric",
      month: "numeric",
      day: "numeric",
      hour: "numeric",
      minute: "numeric",
      second: "numeric",
    });
    if (formatters.size >= MAX_CACHED_ZONES) formatters.clear();
    formatters.set(timezone, formatter);
  }
  return formatter;
}

function pad(value: number): string {
  return String(value).padStart(2, "0");
}

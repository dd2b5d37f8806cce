/**
 * The datetime server tool: the current time in UTC and in a requested IANA zone, or a given time
 * converted between zones. Free, synchronous, and never throws: a bad zone or time is a result
 * the model reads (and can correct), not an error of the request. The clock is injected.
 */
import {
  formatUtcOffset,
  formatZonedDateTime,
  getZonedDateTime,
  isDaylightSavingTime,
  resolveTimeZone,
  resolveWallClock,
  toEpochMsAsUtc,
  type WallClock,
} from "../../config/server-tools/time-zones.js";

export interface DatetimeContext {
  /** The clock; tests pass a fixed instant. */
  now: () => Date;
  /** Zone used when the model names none (canonical IANA name). */
  defaultTimeZone: string;
}

export interface ZonedTimeView {
  timezone: string;
  /** ISO 8601 local time with offset: `2024-03-31T03:30:00+02:00`. */
  local: string;
  utcOffset: string;
  weekday: string;
  isDst: boolean;
}

export type DatetimeErrorCode = "invalid_input" | "unknown_time_zone" | "invalid_time";

export type DatetimeToolResult =
  | {
      ok: true;
      mode: "now" | "convert";
      /** The instant, `YYYY-MM-DDTHH:MM:SSZ`. */
      utc: string;
      unixSeconds: number;
      /** The zone asked for (the target of a conversion). */
      timezone: string;
      /** The instant in that zone, ISO 8601 with offset (OpenRouter's `datetime` item field). */
      datetime: string;
      /** UTC first, then each other zone involved (source of a conversion, then target). */
      times: ZonedTimeView[];
      /** Set when a local time fell in a daylight-saving gap or overlap. */
      note?: string;
      /** The tool result handed to the model (JSON). */
      text: string;
      costMicroUsd: 0;
    }
  | {
      ok: false;
      error: DatetimeErrorCode;
      /** The input field at fault (`timezone`, `from_timezone`, `time`). */
      param?: string;
      message: string;
      text: string;
      costMicroUsd: 0;
    };

const TIME_PATTERN =
  /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.\d{1,9})?)?)?(Z|[+-]\d{2}(?::?\d{2})?)?$/i;
const MAX_OFFSET_MINUTES = 18 * 60;
const ZONE_EXAMPLES = 'Use an IANA name such as "Europe/Paris", "America/New_York" or "UTC".';

type Failure = Extract<DatetimeToolResult, { ok: false }>;

/** Runs one call; `input` is the model's arguments (JSON text, as tool calls carry them, or parsed). */
export function runDatetimeTool(input: string | unknown, context: DatetimeContext): DatetimeToolResult {
  const args = readArguments(input);
  if (args === null) return fail("invalid_input", "The arguments must be a JSON object.");

  const fields: Record<string, string | undefined> = {};
  for (const field of ["timezone", "time", "from_timezone"]) {
    const value = args[field];
    if (value === undefined || value === null || value === "") continue;
    if (typeof value !== "string") return fail("invalid_input", `"${field}" must be a string.`, field);
    fields[field] = value.trim();
  }
  const target = fields.timezone === undefined ? context.defaultTimeZone : resolveTimeZone(fields.timezone);
  if (target === null) return unknownZone("timezone", fields.timezone!);

  if (fields.time === undefined) {
    if (fields.from_timezone !== undefined) {
      return fail("invalid_input", '"from_timezone" needs a "time" to convert.', "from_timezone");
    }
    return describe("now", context.now().getTime(), [target]);
  }

  const parsed = parseTime(fields.time);
  if (parsed === null) {
    return fail(
      "invalid_time",
      `"${truncate(fields.time)}" is not an ISO 8601 date-time (e.g. "2025-03-30T02:30:00", "2025-03-30T02:30:00Z" or "2025-03-30T02:30:00+01:00").`,
      "time",
    );
  }
  if (parsed.offsetMinutes !== undefined) {
    // An explicit offset names the instant; from_timezone (if any) only adds its view.
    const from = fields.from_timezone === undefined ? null : resolveTimeZone(fields.from_timezone);
    if (fields.from_timezone !== undefined && from === null)
      return unknownZone("from_timezone", fields.from_timezone);
    const epochMs = toEpochMsAsUtc(parsed.wall) - parsed.offsetMinutes * 60_000;
    return describe("convert", epochMs, from === null ? [target] : [from, target]);
  }
  const source = fields.from_timezone === undefined ? "UTC" : resolveTimeZone(fields.from_timezone);
  if (source === null) return unknownZone("from_timezone", fields.from_timezone!);
  const resolution = resolveWallClock(source, parsed.wall);
  let note: string | undefined;
  if (resolution.adjustment === "gap") {
    note = `${fields.time} does not exist in ${source} (clocks jumped forward ${formatDuration(resolution.shiftSeconds)} for daylight saving time); the time ${formatDuration(resolution.shiftSeconds)} later was used.`;
  } else if (resolution.adjustment === "overlap") {
    note = `${fields.time} happened twice in ${source} (clocks went back for the end of daylight saving time); the earlier one was used.`;
  }
  return describe("convert", resolution.epochMs, [source, target], note);
}

function describe(
  mode: "now" | "convert",
  epochMs: number,
  zones: string[],
  note?: string,
): DatetimeToolResult {
  const wholeMs = Math.floor(epochMs / 1000) * 1000;
  const utc = `${new Date(wholeMs).toISOString().slice(0, 19)}Z`;
  const unixSeconds = wholeMs / 1000;
  const names = [...new Set(["UTC", ...zones])];
  const times = names.map((timezone): ZonedTimeView => {
    const zoned = getZonedDateTime(timezone, wholeMs);
    return {
      timezone,
      local: formatZonedDateTime(zoned),
      utcOffset: formatUtcOffset(zoned.offsetSeconds),
      weekday: zoned.weekday,
      isDst: isDaylightSavingTime(timezone, wholeMs, zoned.year),
    };
  });
  const target = zones[zones.length - 1];
  const text = JSON.stringify({
    utc,
    unix: unixSeconds,
    times: times.map((view) => ({
      timezone: view.timezone,
      local: view.local,
      utc_offset: view.utcOffset,
      weekday: view.weekday,
      dst: view.isDst,
    })),
    ...(note === undefined ? {} : { note }),
  });
  return {
    ok: true,
    mode,
    utc,
    unixSeconds,
    timezone: target,
    datetime: times.find((view) => view.timezone === target)!.local,
    times,
    ...(note === undefined ? {} : { note }),
    text,
    costMicroUsd: 0,
  };
}

function readArguments(input: unknown): Record<string, unknown> | null {
  let value = input;
  if (typeof input === "string") {
    if (input.trim() === "") return {};
    try {
      value = JSON.parse(input);
    } catch {
      return null;
    }
  }
  if (value === undefined || value === null) return {};
  return typeof value === "object" && !Array.isArray(value) ? (value as Record<string, unknown>) : null;
}

function parseTime(text: string): { wall: WallClock; offsetMinutes?: number } | null {
  const match = TIME_PATTERN.exec(text);
  if (!match) return null;
  const [, year, month, day, hour = "0", minute = "0", second = "0", offset] = match;
  const wall: WallClock = {
    year: Number(year),
    month: Number(month),
    day: Number(day),
    hour: Number(hour),
    minute: Number(minute),
    second: Number(second),
  };
  if (
    wall.year < 1 ||
    wall.month < 1 ||
    wall.month > 12 ||
    wall.hour > 23 ||
    wall.minute > 59 ||
    wall.second > 59
  ) {
    return null;
  }
  const check = new Date(toEpochMsAsUtc(wall));
  if (check.getUTCDate() !== wall.day || check.getUTCMonth() !== wall.month - 1) return null;
  if (offset === undefined) return { wall };
  const offsetMinutes = parseOffsetMinutes(offset);
  return offsetMinutes === null ? null : { wall, offsetMinutes };
}

function parseOffsetMinutes(offset: string): number | null {
  if (offset.toUpperCase() === "Z") return 0;
  const digits = offset.slice(1).replace(":", "");
  const hours = Number(digits.slice(0, 2));
  const minutes = digits.length > 2 ? Number(digits.slice(2)) : 0;
  if (minutes > 59) return null;
  const total = hours * 60 + minutes;
  if (total > MAX_OFFSET_MINUTES) return null;
  return offset[0] === "-" ? -total : total;
}

function formatDuration(seconds: number): string {
  const minutes = Math.round(seconds / 60);
  if (minutes % 60 === 0) return `${minutes / 60} hour${minutes === 60 ? "" : "s"}`;
  return `${minutes} minutes`;
}

function unknownZone(param: string, name: string): Failure {
  return fail(
    "unknown_time_zone",
    `Unknown time zone "${truncate(name)}" in "${param}". ${ZONE_EXAMPLES}`,
    param,
  );
}

function fail(error: DatetimeErrorCode, message: string, param?: string): Failure {
  return {
    ok: false,
    error,
    ...(param === undefined ? {} : { param }),
    message,
    text: JSON.stringify({ error, message }),
    costMicroUsd: 0,
  };
}

function truncate(text: string): string {
  return text.length > 80 ? `${text.slice(0, 79)}…` : text;
}

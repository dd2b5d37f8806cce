/**
 * One date format for every backend's idea of a date: SearXNG's ISO `publishedDate`, Brave's
 * zone-less `page_age` and human `age` ("2 days ago", "May 12, 2023"), Tavily's RFC 1123
 * `published_date`. The answer is `YYYY-MM-DD` when only the day is known, `YYYY-MM-DDTHH:MM:SSZ`
 * (UTC) otherwise, or null for anything that is not clearly a date. A date without a zone is read
 * as UTC, never in the server's local zone, so the answer does not depend on where the gateway runs.
 */

const DAY_PATTERN = /^(\d{4})-(\d{2})-(\d{2})$/;
const ISO_DATE_TIME_PATTERN =
  /^(\d{4}-\d{2}-\d{2})[T ](\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?)(Z|[+-]\d{2}(?::?\d{2})?)?$/i;
const RELATIVE_PATTERN = /^(\d{1,4}|an?|one)\s+(minute|hour|day|week|month|year)s?\s+ago$/i;
const MONTH_NAME_PATTERN = /\b(jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\.?(?=[\s,]|$)/i;
const YEAR_PATTERN = /\b(19|20)\d{2}\b/;
const TIME_PATTERN = /\b\d{1,2}:\d{2}/;
const ZONE_PATTERN = /(\b(GMT|UTC|UT|Z)\b|[+-]\d{4}\b|[+-]\d{2}:\d{2}\b)/i;
const MAX_TEXT_CHARS = 64;
const EARLIEST_YEAR = 1990;

const UNIT_DAYS: Record<string, number> = { day: 1, week: 7, month: 30, year: 365 };
const UNIT_MS: Record<string, number> = { minute: 60_000, hour: 3_600_000 };

export function normalizeSearchDate(value: unknown, now: Date): string | null {
  if (typeof value !== "string") return null;
  const text = value.trim();
  if (text === "" || text.length > MAX_TEXT_CHARS) return null;

  const day = DAY_PATTERN.exec(text);
  if (day) return isRealDay(Number(day[1]), Number(day[2]), Number(day[3])) ? checkRange(text, now) : null;

  const isoDateTime = ISO_DATE_TIME_PATTERN.exec(text);
  if (isoDateTime) {
    const [, date, time, zone] = isoDateTime;
    return formatInstant(Date.parse(`${date}T${time}${normalizeZone(zone)}`), true, now);
  }

  const relative = RELATIVE_PATTERN.exec(text);
  if (relative) return formatRelative(relative[1], relative[2].toLowerCase(), now);

  // Month-name forms ("May 12, 2023", "Tue, 12 Mar 2024 14:00:00 GMT"): the engine's parser is
  // lenient enough to read nonsense as a date, so a month name and a 4-digit year are required.
  if (!MONTH_NAME_PATTERN.test(text) || !YEAR_PATTERN.test(text)) return null;
  const hasTime = TIME_PATTERN.test(text);
  const zoned = ZONE_PATTERN.test(text) ? text : `${text}${hasTime ? "" : " 00:00"} UTC`;
  return formatInstant(Date.parse(zoned), hasTime, now);
}

function normalizeZone(zone: string | undefined): string {
  if (zone === undefined || zone.toUpperCase() === "Z") return "Z";
  if (/^[+-]\d{2}$/.test(zone)) return `${zone}:00`;
  if (/^[+-]\d{4}$/.test(zone)) return `${zone.slice(0, 3)}:${zone.slice(3)}`;
  return zone;
}

function formatInstant(ms: number, withTime: boolean, now: Date): string | null {
  if (!Number.isFinite(ms)) return null;
  const iso = new Date(ms).toISOString();
  return checkRange(withTime ? `${iso.slice(0, 19)}Z` : iso.slice(0, 10), now);
}

function formatRelative(amountText: string, unit: string, now: Date): string | null {
  const amount = /^\d+$/.test(amountText) ? Number(amountText) : 1;
  const ms =
    unit in UNIT_MS
      ? now.getTime() - amount * UNIT_MS[unit]
      : now.getTime() - amount * UNIT_DAYS[unit] * 86_400_000;
  return formatInstant(ms, false, now);
}

function isRealDay(year: number, month: number, day: number): boolean {
  const date = new Date(Date.UTC(year, month - 1, day));
  return date.getUTCFullYear() === year && date.getUTCMonth() === month - 1 && date.getUTCDate() === day;
}

/** Dates before the web's search era or more than a day ahead of the clock are noise, not dates. */
function checkRange(normalized: string, now: Date): string | null {
  const year = Number(normalized.slice(0, 4));
  if (year < EARLIEST_YEAR) return null;
  const ms = Date.parse(normalized.length === 10 ? `${normalized}T00:00:00Z` : normalized);
  return ms > now.getTime() + 86_400_000 ? null : normalized;
}

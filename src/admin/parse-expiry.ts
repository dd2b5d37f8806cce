/**
 * Key expiry as ISO-8601 text: a date (`2027-01-31`, midnight UTC) or a date-time
 * (`2027-01-31T12:00:00Z`, `…+02:00`; without a zone it is read as UTC, never as the local time of
 * whichever machine runs the command). Date.parse alone would accept formats like "Jan 5".
 */
import { GatewayError } from "../errors/gateway-error.js";

const ISO_PATTERN =
  /^(\d{4}-\d{2}-\d{2})(?:[T ](\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?)(Z|[+-]\d{2}:?\d{2})?)?$/i;

export function parseExpiry(text: string, param = "expires_at"): Date {
  const match = ISO_PATTERN.exec(text.trim());
  const invalid = () =>
    GatewayError.invalidRequest(`${param} must be an ISO-8601 date or date-time, got "${text}"`, param);
  if (!match) throw invalid();
  const [, date, time, zone] = match;
  const normalised = time === undefined ? `${date}T00:00:00Z` : `${date}T${time}${zone ?? "Z"}`;
  const parsed = new Date(normalised);
  if (Number.isNaN(parsed.getTime()) || !isCalendarDate(date)) throw invalid();
  return parsed;
}

/** Date rolls 2027-02-30 over into March; refuse it instead. */
function isCalendarDate(date: string): boolean {
  const [year, month, day] = date.split("-").map(Number);
  const check = new Date(Date.UTC(year, month - 1, day));
  return check.getUTCFullYear() === year && check.getUTCMonth() === month - 1 && check.getUTCDate() === day;
}

/**
 * The activity log's query parameters (key_id, session_id, model, status, error_code, since,
 * until, cursor), read once for the JSON listing and the CSV export alike. Every bad value is a
 * 400 naming its parameter.
 */
import type { GenerationCursor, GenerationFilter } from "../../admin/ports.js";
import type { GenerationStatus } from "../../engine/generation-record.js";
import { GatewayError } from "../../errors/gateway-error.js";
import type { RouteContext } from "../router/route-context.js";

export const GENERATION_STATUSES: readonly GenerationStatus[] = [
  "in_progress",
  "ok",
  "error",
  "cancelled",
  "interrupted",
];
const MAX_TEXT = 200;
/** ISO-8601 with a time and a zone (`Z` or `±hh:mm`); a date alone is taken as UTC midnight. */
const TIMESTAMP = /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d{1,6})?)?(Z|[+-]\d{2}:\d{2}))?$/;

export function readGenerationFilter(c: RouteContext, workspaceId: string): GenerationFilter {
  const text = (name: string) => {
    const value = c.req.query(name);
    if (value === undefined || value === "") return undefined;
    if (value.length > MAX_TEXT) {
      throw GatewayError.invalidRequest(`${name} must be at most ${MAX_TEXT} characters`, name);
    }
    return value;
  };
  const status = text("status");
  if (status !== undefined && !GENERATION_STATUSES.includes(status as GenerationStatus)) {
    throw GatewayError.invalidRequest(`status must be one of ${GENERATION_STATUSES.join(", ")}`, "status");
  }
  const filter: GenerationFilter = {
    workspaceId,
    apiKeyId: text("key_id"),
    sessionId: text("session_id"),
    model: text("model"),
    status: status as GenerationStatus | undefined,
    errorCode: text("error_code"),
    since: readTimestamp(text("since"), "since"),
    until: readTimestamp(text("until"), "until"),
  };
  if (filter.since && filter.until && filter.since >= filter.until) {
    throw GatewayError.invalidRequest("since must be before until", "since");
  }
  return filter;
}

function readTimestamp(value: string | undefined, name: string): Date | undefined {
  if (value === undefined) return undefined;
  const time = TIMESTAMP.test(value) ? Date.parse(value.length === 10 ? `${value}T00:00:00Z` : value) : NaN;
  if (Number.isNaN(time)) {
    throw GatewayError.invalidRequest(
      `${name} must be an ISO-8601 time with its zone, e.g. 2026-11-28T09:30:00Z`,
      name,
    );
  }
  return new Date(time);
}

/** A cursor is opaque to callers: base64url of `<microseconds>:<id>`. */
export function encodeCursor(cursor: GenerationCursor): string {
  return Buffer.from(`${cursor.createdAtMicros}:${cursor.id}`, "utf8").toString("base64url");
}

export function readCursor(c: RouteContext): GenerationCursor | undefined {
  const value = c.req.query("cursor");
  if (value === undefined || value === "") return undefined;
  const decoded = /^[A-Za-z0-9_-]{1,400}$/.test(value)
    ? Buffer.from(value, "base64url").toString("utf8")
    : "";
  const match = /^(-?\d{1,19}):(.{1,200})$/s.exec(decoded);
  if (!match) throw GatewayError.invalidRequest("cursor is not one this API handed out", "cursor");
  return { createdAtMicros: BigInt(match[1]), id: match[2] };
}

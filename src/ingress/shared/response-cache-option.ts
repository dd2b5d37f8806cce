/**
 * The exact response cache asked per request (docs/response-cache.md): the body field `hi_cache`
 * or the header `X-Hi-Cache`, each `true` (the default time-to-live), a number of seconds, or
 * `false` (not this request, whatever the key's or workspace's policy). The body field wins when
 * both are sent.
 */
import { z } from "zod";
import { GatewayError } from "../../errors/gateway-error.js";

export const CACHE_HEADER = "x-hi-cache";

/** The time-to-live of `true`, in seconds. */
export const DEFAULT_CACHE_TTL_SECONDS = 300;

export const cacheFieldSchema = z
  .union([
    z.boolean(),
    z
      .int()
      .min(1)
      .max(30 * 86_400),
  ])
  .nullish()
  .meta({
    description:
      "exact response cache: true (5 minutes) or a time-to-live in seconds answers a repeat of this request " +
      "from the cache at no cost; false bypasses a key or workspace policy; also the header X-Hi-Cache",
  });

/**
 * The request's own cache choice in seconds (0: off), or undefined when it made none; a header
 * that is neither a boolean nor a positive number of seconds is refused naming it.
 */
export function readCacheOption(
  bodyValue: boolean | number | null | undefined,
  headerValue: string | null | undefined,
): number | undefined {
  if (bodyValue !== undefined && bodyValue !== null) return toSeconds(bodyValue);
  if (headerValue === undefined || headerValue === null) return undefined;
  const text = headerValue.trim().toLowerCase();
  if (text === "true") return DEFAULT_CACHE_TTL_SECONDS;
  if (text === "false") return 0;
  const seconds = /^\d{1,7}$/.test(text) ? Number(text) : Number.NaN;
  if (!(seconds >= 1 && seconds <= 30 * 86_400)) {
    throw GatewayError.invalidRequest(
      "X-Hi-Cache must be true, false, or a time-to-live in seconds from 1 to 2592000",
      "X-Hi-Cache",
    );
  }
  return seconds;
}

function toSeconds(value: boolean | number): number {
  if (value === true) return DEFAULT_CACHE_TTL_SECONDS;
  if (value === false) return 0;
  return value;
}

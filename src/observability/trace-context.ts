/**
 * W3C Trace Context: the `traceparent` a caller sends (`00-<trace id>-<parent span id>-<flags>`)
 * read, and written again for the upstream calls. Plain string work with no OpenTelemetry module,
 * so it can run on every traced request's arrival.
 */
import { randomBytes } from "node:crypto";

/** The caller's span: the parent of the gateway's request span. */
export interface RemoteSpan {
  traceId: string;
  spanId: string;
  /** The caller recorded its span and asks that this one be recorded too (flag bit 0). */
  sampled: boolean;
}

/** `tracestate` longer than this is not passed on (the limit the specification sets). */
const MAX_TRACESTATE_LENGTH = 512;
const TRACEPARENT = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-[^\s]*)?$/;
const ALL_ZEROS = /^0+$/;

/**
 * The caller's span, or undefined when the header is absent, repeated or malformed (the request
 * then starts a trace of its own). Version 00 has exactly four fields; a later version may add
 * fields, which are ignored; version ff and all-zero ids are invalid.
 */
export function parseTraceparent(header: string | string[] | undefined): RemoteSpan | undefined {
  if (typeof header !== "string") return undefined;
  const match = TRACEPARENT.exec(header.trim());
  if (match === null) return undefined;
  const [, version, traceId, spanId, flags, rest] = match;
  if (version === "ff" || (version === "00" && rest !== undefined)) return undefined;
  if (ALL_ZEROS.test(traceId) || ALL_ZEROS.test(spanId)) return undefined;
  return { traceId, spanId, sampled: (Number.parseInt(flags, 16) & 1) === 1 };
}

/** The caller's `tracestate`, passed on as is when it is one header of sane length. */
export function readTracestate(header: string | string[] | undefined): string | undefined {
  if (typeof header !== "string") return undefined;
  const value = header.trim();
  return value.length > 0 && value.length <= MAX_TRACESTATE_LENGTH ? value : undefined;
}

export function formatTraceparent(traceId: string, spanId: string, sampled: boolean): string {
  return `00-${traceId}-${spanId}-${sampled ? "01" : "00"}`;
}

export function createTraceId(): string {
  return randomBytes(16).toString("hex");
}

export function createSpanId(): string {
  return randomBytes(8).toString("hex");
}

/**
 * Configuration of the web_fetch tool: the YAML block `server_tools.web_fetch` (snake_case, as in
 * the file) and its runtime view. Every field has a default, so an absent block means web_fetch is
 * available with the safe defaults below (docs/server-tools.md lists them).
 */
import { z } from "zod";
import {
  type HtmlConversionSettings,
  htmlConversionConfigSchema,
  toHtmlConversionSettings,
} from "./html-conversion-config.js";

export const WEB_FETCH_DEFAULTS = {
  enabled: true,
  allowHttp: true,
  allowedPorts: [80, 443],
  maxBytes: 10 * 1024 * 1024,
  timeoutMs: 20_000,
  maxRedirects: 5,
  maxContentTokens: 25_000,
  pricePerCallMicroUsd: 0,
} as const;

export const webFetchConfigSchema = z.strictObject({
  /** false: activating web_fetch is an `invalid_request` naming this setting. */
  enabled: z.boolean().default(WEB_FETCH_DEFAULTS.enabled),
  /** Whether plain `http:` URLs are fetched (`https:` always is). */
  allow_http: z.boolean().default(WEB_FETCH_DEFAULTS.allowHttp),
  /** Destination ports that may be fetched; the URL's port, explicit or implied by the scheme. */
  allowed_ports: z
    .array(z.int().min(1).max(65_535))
    .min(1)
    .max(64)
    .default([...WEB_FETCH_DEFAULTS.allowedPorts]),
  /** Largest body read, after decompression; a larger one is abandoned (`too_large`). */
  max_bytes: z
    .int()
    .min(1024)
    .max(100 * 1024 * 1024)
    .default(WEB_FETCH_DEFAULTS.maxBytes),
  /** One deadline for the whole fetch: DNS, connects, every redirect, the body and the conversion. */
  timeout_ms: z.int().min(100).max(120_000).default(WEB_FETCH_DEFAULTS.timeoutMs),
  /** Redirects followed per fetch (each one re-checked); one more is `too_many_redirects`. */
  max_redirects: z.int().min(0).max(10).default(WEB_FETCH_DEFAULTS.maxRedirects),
  /** Largest page text handed to the model, in tokens (estimated linearly, see docs). */
  max_content_tokens: z.int().min(100).max(1_000_000).default(WEB_FETCH_DEFAULTS.maxContentTokens),
  /** Price of one call in integer micro-USD. */
  price_per_call_micro_usd: z
    .int()
    .min(0)
    .max(1_000_000_000)
    .default(WEB_FETCH_DEFAULTS.pricePerCallMicroUsd),
  /** The bounds of HTML conversion: workers, deadline, page size and shape, per-key shares. */
  html_conversion: htmlConversionConfigSchema.prefault({}),
  /**
   * TESTS ONLY: also allow loopback destinations (127.0.0.0/8 and ::1). Private, link-local,
   * metadata and every other refused range stay refused. Logged as a warning at start when on.
   */
  unsafe_allow_loopback_for_tests: z.boolean().default(false),
});

export type WebFetchConfigFile = z.infer<typeof webFetchConfigSchema>;

/** Runtime view of the web_fetch configuration. */
export interface WebFetchSettings {
  enabled: boolean;
  allowHttp: boolean;
  allowedPorts: readonly number[];
  maxBytes: number;
  timeoutMs: number;
  maxRedirects: number;
  maxContentTokens: number;
  pricePerCallMicroUsd: number;
  htmlConversion: HtmlConversionSettings;
  unsafeAllowLoopbackForTests: boolean;
}

export function toWebFetchSettings(file: WebFetchConfigFile): WebFetchSettings {
  return {
    enabled: file.enabled,
    allowHttp: file.allow_http,
    allowedPorts: [...new Set(file.allowed_ports)],
    maxBytes: file.max_bytes,
    timeoutMs: file.timeout_ms,
    maxRedirects: file.max_redirects,
    maxContentTokens: file.max_content_tokens,
    pricePerCallMicroUsd: file.price_per_call_micro_usd,
    htmlConversion: toHtmlConversionSettings(file.html_conversion),
    unsafeAllowLoopbackForTests: file.unsafe_allow_loopback_for_tests,
  };
}

/** The settings of an absent `server_tools.web_fetch` block. */
export function defaultWebFetchSettings(): WebFetchSettings {
  return toWebFetchSettings(webFetchConfigSchema.parse({}));
}

/** The logger method the startup warning needs (pino's `warn` fits). */
export interface WarningSink {
  warn(fields: Record<string, unknown>, message: string): void;
}

export const UNSAFE_LOOPBACK_WARNING =
  "server_tools.web_fetch.unsafe_allow_loopback_for_tests is ON: web_fetch may reach services on this " +
  "machine's loopback interface. This setting exists for tests only; never enable it in production.";

/**
 * Logs a loud warning when the configuration weakens web_fetch's address checks; call it once at
 * start. Returns whether it warned.
 */
export function warnIfWebFetchUnsafe(settings: WebFetchSettings, sink: WarningSink): boolean {
  if (!settings.enabled || !settings.unsafeAllowLoopbackForTests) return false;
  sink.warn({ setting: "server_tools.web_fetch.unsafe_allow_loopback_for_tests" }, UNSAFE_LOOPBACK_WARNING);
  return true;
}

/**
 * Schema of the `web_search` server tool's configuration (`server_tools.web_search` in the YAML
 * file). Field names stay snake_case as in the file; `create-web-search-backends.ts` turns the
 * parsed value into ready backends. Prices are USD per call, written as in the rest of the file
 * (a number or a decimal string) and converted exactly to integer micro-USD.
 */
import { z } from "zod";
import { tryParseUsdToMicroUsd } from "../../metering/money.js";

export const DEFAULT_SEARCH_TIMEOUT_MS = 5_000;
export const DEFAULT_MAX_RESPONSE_BYTES = 1024 * 1024;
export const DEFAULT_MAX_RESULT_COUNT = 10;
export const DEFAULT_MAX_RESULT_TEXT_CHARS = 12_000;
export const DEFAULT_BASE_URLS = {
  brave: "https://api.search.brave.com",
  tavily: "https://api.tavily.com",
} as const;

/** USD per call; at most 6 decimals, so it is a whole number of micro-USD. */
const pricePerCallSchema = z
  .union([z.number().nonnegative(), z.string().regex(/^\d+(\.\d+)?$/, "a decimal number of USD")])
  .superRefine((value, context) => {
    const parsed = tryParseUsdToMicroUsd(value);
    if (!parsed.ok) context.addIssue({ code: "custom", message: parsed.reason });
  });

const environmentVariableSchema = z.string().regex(/^[A-Z_][A-Z0-9_]*$/, "an environment variable name");

const baseUrlSchema = z
  .url({ protocol: /^https?$/ })
  .refine((url) => !/^[a-z]+:\/\/[^/]*@/i.test(url), "must not contain credentials (use api_key_env)");

const commonBackendFields = {
  id: z.string().regex(/^[a-z0-9][a-z0-9_-]*$/, "lowercase letters, digits, - and _"),
  /** Deadline of one call (connect, headers and body), in milliseconds. */
  timeout_ms: z.int().min(100).max(60_000).default(DEFAULT_SEARCH_TIMEOUT_MS),
  /** Answers larger than this fail as `bad_response` without being read further. */
  max_response_bytes: z
    .int()
    .min(1024)
    .max(16 * 1024 * 1024)
    .default(DEFAULT_MAX_RESPONSE_BYTES),
  /** What one successful call costs the caller, in USD (`"0.005"`); a failed call costs nothing. */
  price_per_call_usd: pricePerCallSchema,
};

export const searxngBackendConfigSchema = z.strictObject({
  kind: z.literal("searxng"),
  ...commonBackendFields,
  /** The instance's root, e.g. `http://searxng:8080` (no default: SearXNG is self-hosted). */
  base_url: baseUrlSchema,
  /** Optional: the variable's value is sent verbatim in `auth_header` (e.g. `Bearer abc`). */
  api_key_env: environmentVariableSchema.optional(),
  auth_header: z
    .string()
    .regex(/^[A-Za-z0-9-]+$/, "a header name")
    .default("Authorization"),
  categories: z.array(z.string().min(1)).default(["general"]),
  language: z.string().min(1).optional(),
  safesearch: z.union([z.literal(0), z.literal(1), z.literal(2)]).optional(),
});

export const braveBackendConfigSchema = z.strictObject({
  kind: z.literal("brave"),
  ...commonBackendFields,
  base_url: baseUrlSchema.default(DEFAULT_BASE_URLS.brave),
  api_key_env: environmentVariableSchema,
  safesearch: z.enum(["off", "moderate", "strict"]).optional(),
});

export const tavilyBackendConfigSchema = z.strictObject({
  kind: z.literal("tavily"),
  ...commonBackendFields,
  base_url: baseUrlSchema.default(DEFAULT_BASE_URLS.tavily),
  api_key_env: environmentVariableSchema,
  /** `advanced` costs Tavily two credits per call: set `price_per_call_usd` accordingly. */
  search_depth: z.enum(["basic", "advanced"]).default("basic"),
});

export const searchBackendConfigSchema = z.discriminatedUnion("kind", [
  searxngBackendConfigSchema,
  braveBackendConfigSchema,
  tavilyBackendConfigSchema,
]);

export const webSearchConfigSchema = z
  .strictObject({
    backends: z.array(searchBackendConfigSchema).min(1, "at least one backend"),
    /** The backend searches use; default: the first in `backends`. */
    default_backend: z.string().min(1).optional(),
    /** Most results one search may return (the model's `count` and `max_results` stop here); at most 20. */
    max_result_count: z.int().min(1).max(20).default(DEFAULT_MAX_RESULT_COUNT),
    /** Longest text rendering of one search's results handed to the model, in characters. */
    max_result_text_chars: z.int().min(500).max(200_000).default(DEFAULT_MAX_RESULT_TEXT_CHARS),
  })
  .superRefine((config, context) => {
    const ids = new Set<string>();
    config.backends.forEach((backend, index) => {
      if (ids.has(backend.id)) {
        context.addIssue({
          code: "custom",
          path: ["backends", index, "id"],
          message: `duplicate backend id "${backend.id}"`,
        });
      }
      ids.add(backend.id);
    });
    if (config.default_backend !== undefined && !ids.has(config.default_backend)) {
      context.addIssue({
        code: "custom",
        path: ["default_backend"],
        message: `unknown backend "${config.default_backend}" (configured: ${[...ids].join(", ")})`,
      });
    }
  });

export type WebSearchConfigFile = z.infer<typeof webSearchConfigSchema>;
export type SearchBackendConfigFile = z.infer<typeof searchBackendConfigSchema>;

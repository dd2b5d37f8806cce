/** Keeps the error catalog, docs/errors.md and the OpenAPI document in agreement. */
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";
import { ERROR_CATALOG, ERROR_CODES } from "../src/errors/catalog.js";
import {
  createCommonErrorEnvelope,
  createErrorHeaders,
  createMessagesErrorEnvelope,
} from "../src/errors/envelopes.js";
import { GatewayError } from "../src/errors/gateway-error.js";
import { createSchemaComponents } from "../src/http/openapi/openapi-schema-components.js";
import { commonErrorSchema } from "../src/http/openapi/openapi-schemas.js";

const SPEC_STATUSES: Record<string, number> = {
  provider_auth: 502,
  provider_rate_limit: 429,
  provider_overloaded: 529,
  context_length_exceeded: 400,
  content_filter: 400,
  provider_timeout: 504,
  provider_unavailable: 502,
  insufficient_credits: 402,
  key_limit_exceeded: 402,
  model_not_allowed: 403,
  invalid_api_key: 401,
  workspace_locked: 403,
  rate_limit_exceeded: 429,
  invalid_request: 400,
  payload_too_large: 413,
  internal_error: 500,
};
const RETRYABLE = [
  "rate_limit_exceeded",
  "provider_rate_limit",
  "provider_overloaded",
  "provider_timeout",
  "provider_unavailable",
];

test("the catalog holds exactly the 16 documented codes with their statuses", () => {
  assert.deepEqual(
    Object.fromEntries(ERROR_CODES.map((code) => [code, ERROR_CATALOG[code].status])),
    SPEC_STATUSES,
  );
});

test("exactly the five retryable codes carry Retry-After and retry_after_seconds, clamped to 1..120", () => {
  for (const code of ERROR_CODES) {
    const error = new GatewayError(code, "x", { retryAfterSeconds: 500 });
    const headers = createErrorHeaders(error);
    const common = createCommonErrorEnvelope(error, "r1");
    const messages = createMessagesErrorEnvelope(error, "r1");
    if (RETRYABLE.includes(code)) {
      assert.equal(headers["Retry-After"], "120", code);
      assert.equal(common.error.retry_after_seconds, 120, code);
      assert.equal(messages.error.retry_after_seconds, 120, code);
    } else {
      assert.equal(headers["Retry-After"], undefined, code);
      assert.equal("retry_after_seconds" in common.error, false, code);
      assert.equal("retry_after_seconds" in messages.error, false, code);
    }
  }
  assert.equal(new GatewayError("provider_timeout", "x", { retryAfterSeconds: 0.2 }).retryAfterSeconds, 1);
  assert.equal(new GatewayError("provider_timeout", "x").retryAfterSeconds, 1);
});

test("docs/errors.md lists every code with the catalog's status, retry flag and types", () => {
  const text = readFileSync(new URL("../docs/errors.md", import.meta.url), "utf8");
  const rows = new Map<string, string[]>();
  for (const line of text.split("\n")) {
    const cells = line.split("|").map((cell) => cell.trim());
    if (cells.length >= 7 && /^[a-z_]+$/.test(cells[1]) && /^\d{3}$/.test(cells[2]))
      rows.set(cells[1], cells.slice(2, 6));
  }
  assert.deepEqual([...rows.keys()].sort(), [...ERROR_CODES].sort());
  for (const code of ERROR_CODES) {
    const entry = ERROR_CATALOG[code];
    assert.deepEqual(
      rows.get(code),
      [String(entry.status), entry.retryable ? "yes" : "no", entry.openaiType, entry.anthropicType],
      code,
    );
  }
});

test("the OpenAPI ErrorCode enum is the catalog", () => {
  const components = createSchemaComponents();
  components.convert(commonErrorSchema);
  const errorCode = components.schemas.ErrorCode as { enum?: string[] };
  assert.deepEqual([...(errorCode.enum ?? [])].sort(), [...ERROR_CODES].sort());
});

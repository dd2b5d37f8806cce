/**
 * What every answer of the gateway to a fuzzed request must satisfy: no 5xx, and an error body in
 * the endpoint's envelope with a catalog code, the catalog's status and type, and Retry-After
 * exactly when the code is retryable.
 */
import assert from "node:assert/strict";
import { ERROR_CATALOG, type ErrorCode } from "../../src/errors/catalog.js";
import { isErrorCode } from "../../src/errors/gateway-error.js";
import type { RawAnswer } from "./raw-http.js";

export type Envelope = "common" | "messages";

export interface ErrorSeen {
  code: ErrorCode;
  message: string;
  /** Common envelope only (the messages envelope has no param). */
  param: string | null | undefined;
  requestId: string | undefined;
}

/** Asserts the answer is not a server error; for 4xx, the envelope. Returns the error, if any. */
export function checkAnswer(answer: RawAnswer, envelope: Envelope, what: string): ErrorSeen | undefined {
  const context = `${what} → ${answer.status} ${answer.text.slice(0, 600)}`;
  assert.ok(answer.status < 500, `server error: ${context}`);
  if (answer.status < 400) return undefined;
  let body: unknown;
  try {
    body = JSON.parse(answer.text);
  } catch {
    assert.fail(`error body is not JSON: ${context}`);
  }
  const seen =
    envelope === "messages" ? readMessagesEnvelope(body, context) : readCommonEnvelope(body, context);
  const entry = ERROR_CATALOG[seen.code];
  // An unknown path (404) or a method the path does not serve (405, with `Allow`) is an
  // `invalid_request` answered with the status HTTP has for it.
  const routingStatus = answer.status === 404 || answer.status === 405;
  assert.equal(routingStatus ? 400 : answer.status, entry.status, `status of ${seen.code}: ${context}`);
  if (answer.status === 405) assert.ok(answer.headers.allow, `405 without Allow: ${context}`);
  const retryAfter = answer.headers["retry-after"];
  assert.equal(retryAfter !== undefined, entry.retryable, `Retry-After iff retryable: ${context}`);
  assert.equal(answer.headers["content-type"], "application/json", `content type: ${context}`);
  assert.ok(seen.message.length > 0, `empty message: ${context}`);
  return seen;
}

function readCommonEnvelope(body: unknown, context: string): ErrorSeen {
  const error = (body as { error?: Record<string, unknown> })?.error;
  assert.ok(typeof error === "object" && error !== null, `no error object: ${context}`);
  const code = error.code;
  assert.ok(typeof code === "string" && isErrorCode(code), `code not in the catalog: ${context}`);
  assert.equal(error.type, ERROR_CATALOG[code].openaiType, `type: ${context}`);
  assert.ok(typeof error.message === "string", `message: ${context}`);
  assert.ok(error.param === null || typeof error.param === "string", `param: ${context}`);
  assert.ok(!("type" in (body as object)), `common envelope has no top-level type: ${context}`);
  return {
    code,
    message: error.message,
    param: error.param,
    requestId: typeof error.request_id === "string" ? error.request_id : undefined,
  };
}

function readMessagesEnvelope(body: unknown, context: string): ErrorSeen {
  const envelope = body as { type?: unknown; error?: Record<string, unknown>; request_id?: unknown };
  assert.equal(envelope?.type, "error", `messages envelope type: ${context}`);
  const error = envelope.error;
  assert.ok(typeof error === "object" && error !== null, `no error object: ${context}`);
  const code = error.code;
  assert.ok(typeof code === "string" && isErrorCode(code), `code not in the catalog: ${context}`);
  assert.equal(error.type, ERROR_CATALOG[code].anthropicType, `type: ${context}`);
  assert.ok(typeof error.message === "string", `message: ${context}`);
  return {
    code,
    message: error.message,
    param: undefined,
    requestId: typeof envelope.request_id === "string" ? envelope.request_id : undefined,
  };
}

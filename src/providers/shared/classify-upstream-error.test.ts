import assert from "node:assert/strict";
import { test } from "node:test";
import {
  classifyStreamErrorFrame,
  classifyUpstreamError,
  parseUpstreamErrorBody,
  readRetryAfterSeconds,
  toUpstreamErrorInfo,
} from "./classify-upstream-error.js";

function openAiError(message: string, extra: Record<string, unknown> = {}): string {
  return JSON.stringify({
    error: { message, type: "invalid_request_error", param: null, code: null, ...extra },
  });
}

test("401 and 403 are provider_auth and never echo the upstream text (it can hold key fragments)", () => {
  const body = openAiError("Incorrect API key provided: sk-abc123***************wxyz.", {
    code: "invalid_api_key",
  });
  for (const status of [401, 403]) {
    const error = classifyUpstreamError({ status, bodyText: body });
    assert.equal(error.code, "provider_auth");
    assert.equal(error.status, 502);
    assert.equal(error.upstreamStatus, status);
    assert.doesNotMatch(error.message, /sk-/);
  }
});

test("402 (the gateway's upstream account has no funds) is provider_auth, not the caller's invalid_request", () => {
  const body = JSON.stringify({ error: { message: "Insufficient credits", code: 402 } });
  assert.equal(classifyUpstreamError({ status: 402, bodyText: body }).code, "provider_auth");
});

test("429 is provider_rate_limit with Retry-After seconds, retry-after-ms winning", () => {
  const seconds = classifyUpstreamError({ status: 429, headers: { "retry-after": "7" }, bodyText: "" });
  assert.equal(seconds.code, "provider_rate_limit");
  assert.equal(seconds.retryAfterSeconds, 7);
  const milliseconds = classifyUpstreamError({
    status: 429,
    headers: { "Retry-After": "30", "retry-after-ms": "2500" },
    bodyText: "{}",
  });
  assert.equal(milliseconds.retryAfterSeconds, 3);
});

test("Gemini RetryInfo.retryDelay is the retry hint when no header is present", () => {
  const body = JSON.stringify({
    error: {
      code: 429,
      message: "Resource has been exhausted",
      status: "RESOURCE_EXHAUSTED",
      details: [{ "@type": "type.googleapis.com/google.rpc.RetryInfo", retryDelay: "34.4s" }],
    },
  });
  const error = classifyUpstreamError({ status: 429, bodyText: body });
  assert.equal(error.code, "provider_rate_limit");
  assert.equal(error.retryAfterSeconds, 35);
});

test("529 and Anthropic overloaded_error are provider_overloaded", () => {
  assert.equal(classifyUpstreamError({ status: 529, bodyText: "" }).code, "provider_overloaded");
  const anthropic = JSON.stringify({
    type: "error",
    error: { type: "overloaded_error", message: "Overloaded" },
  });
  assert.equal(classifyUpstreamError({ status: 500, bodyText: anthropic }).code, "provider_overloaded");
  const gemini = JSON.stringify({
    error: { code: 503, message: "The model is overloaded.", status: "UNAVAILABLE" },
  });
  assert.equal(classifyUpstreamError({ status: 503, bodyText: gemini }).code, "provider_overloaded");
});

test("5xx is provider_unavailable; 408 and 504 are provider_timeout", () => {
  assert.equal(
    classifyUpstreamError({ status: 500, bodyText: "<html>oops</html>" }).code,
    "provider_unavailable",
  );
  assert.equal(classifyUpstreamError({ status: 502, bodyText: "" }).code, "provider_unavailable");
  assert.equal(classifyUpstreamError({ status: 408, bodyText: "" }).code, "provider_timeout");
  assert.equal(classifyUpstreamError({ status: 504, bodyText: "" }).code, "provider_timeout");
});

test("3xx is never followed and counts as provider_unavailable", () => {
  assert.equal(
    classifyUpstreamError({ status: 302, headers: { location: "http://x" } }).code,
    "provider_unavailable",
  );
});

test("context-length messages of every vendor become context_length_exceeded", () => {
  const messages = [
    "This model's maximum context length is 128000 tokens. However, your messages resulted in 130000 tokens.",
    "prompt is too long: 210000 tokens > 200000 maximum",
    "The input is longer than the model's context length",
    "Request too large for model in organization",
    "Input tokens exceed the configured limit of 272000 tokens.",
    "The input token count (1200000) exceeds the maximum number of tokens allowed (1048576).",
  ];
  for (const message of messages) {
    const error = classifyUpstreamError({ status: 400, bodyText: openAiError(message) });
    assert.equal(error.code, "context_length_exceeded", message);
    assert.equal(error.message, message);
  }
  const byCode = classifyUpstreamError({
    status: 400,
    bodyText: openAiError("too long", { code: "context_length_exceeded", param: "messages" }),
  });
  assert.equal(byCode.code, "context_length_exceeded");
  assert.equal(byCode.param, "messages");
  assert.equal(
    classifyUpstreamError({ status: 413, bodyText: openAiError("context_window_exceeded") }).code,
    "context_length_exceeded",
  );
});

test("content-policy codes become content_filter", () => {
  const azure = openAiError(
    "The response was filtered due to the prompt triggering content management policy.",
    {
      code: "content_filter",
    },
  );
  assert.equal(classifyUpstreamError({ status: 400, bodyText: azure }).code, "content_filter");
  const openAi = openAiError("Your request was rejected by our safety system.", {
    code: "content_policy_violation",
  });
  assert.equal(classifyUpstreamError({ status: 400, bodyText: openAi }).code, "content_filter");
});

test("other 4xx are invalid_request carrying the upstream message and param", () => {
  const body = JSON.stringify({
    error: {
      code: "unsupported_value",
      message: "Unsupported value: 'messages[0].role' does not support 'developer' with this model.",
      param: "messages[0].role",
      type: "invalid_request_error",
    },
  });
  const error = classifyUpstreamError({ status: 400, bodyText: body });
  assert.equal(error.code, "invalid_request");
  assert.equal(error.param, "messages[0].role");
  assert.match(error.message, /does not support 'developer'/);
  assert.equal(error.retryAfterSeconds, undefined);
});

test("credential-looking tokens in forwarded messages are masked", () => {
  const error = classifyUpstreamError({
    status: 400,
    bodyText: openAiError("bad header Bearer abcdefghijklmnop for key sk-proj-ABCDEFGHIJKLMNOP"),
  });
  assert.doesNotMatch(error.message, /abcdefghijklmnop|ABCDEFGHIJKLMNOP/);
  assert.match(error.message, /\[redacted\]/);
});

test("Anthropic and Gemini 400 envelopes are read", () => {
  const anthropic = JSON.stringify({
    type: "error",
    error: { type: "invalid_request_error", message: "max_tokens: Field required" },
    request_id: "req_1",
  });
  assert.equal(
    classifyUpstreamError({ status: 400, bodyText: anthropic }).message,
    "max_tokens: Field required",
  );
  const gemini = JSON.stringify({
    error: { code: 400, message: "Invalid JSON payload", status: "INVALID_ARGUMENT" },
  });
  assert.deepEqual(parseUpstreamErrorBody(gemini), {
    message: "Invalid JSON payload",
    httpCode: 400,
    rpcStatus: "INVALID_ARGUMENT",
  });
});

test("in-stream error frames are classified from their type or code", () => {
  assert.equal(
    classifyStreamErrorFrame({ type: "error", error: { type: "overloaded_error", message: "Overloaded" } })
      .code,
    "provider_overloaded",
  );
  assert.equal(
    classifyStreamErrorFrame({
      error: { message: "Rate limit", type: "requests", code: "rate_limit_exceeded" },
    }).code,
    "provider_rate_limit",
  );
  assert.equal(
    classifyStreamErrorFrame({ error: { message: "boom", type: "server_error" } }).code,
    "provider_unavailable",
  );
  assert.equal(
    classifyStreamErrorFrame({ error: { code: 504, status: "DEADLINE_EXCEEDED" } }).code,
    "provider_timeout",
  );
  assert.equal(classifyStreamErrorFrame({ error: "something broke" }).code, "provider_unavailable");
  const info = toUpstreamErrorInfo(
    classifyStreamErrorFrame({ error: { message: "x", type: "server_error" } }),
  );
  assert.deepEqual(info, {
    code: "provider_unavailable",
    message: "The upstream provider failed (HTTP 500)",
    param: null,
    retryAfterSeconds: 1,
    upstreamStatus: 500,
  });
});

test("readRetryAfterSeconds understands HTTP dates and ignores garbage", () => {
  const inTenSeconds = new Date(Date.now() + 10_000).toUTCString();
  const seconds = readRetryAfterSeconds({ "retry-after": inTenSeconds });
  assert.ok(seconds !== undefined && seconds > 8 && seconds <= 10, String(seconds));
  assert.equal(readRetryAfterSeconds({ "retry-after": "soon" }), undefined);
  assert.equal(readRetryAfterSeconds({}), undefined);
});

test("upstream 4xx about the gateway's own account become provider_auth, without the upstream wording", () => {
  const anthropic = classifyUpstreamError({
    status: 400,
    bodyText: JSON.stringify({
      type: "error",
      error: {
        type: "invalid_request_error",
        message: "Your credit balance is too low to access the Anthropic API.",
      },
    }),
  });
  assert.equal(anthropic.code, "provider_auth");
  assert.doesNotMatch(anthropic.message, /credit balance/);
  const gemini = classifyUpstreamError({
    status: 400,
    bodyText: JSON.stringify({
      error: {
        code: 400,
        message: "API key not valid. Please pass a valid API key.",
        status: "INVALID_ARGUMENT",
      },
    }),
  });
  assert.equal(gemini.code, "provider_auth");
});

test("OpenAI insufficient_quota is the gateway's account problem, not a rate limit", () => {
  const error = classifyUpstreamError({
    status: 429,
    bodyText: JSON.stringify({
      error: {
        message: "You exceeded your current quota",
        type: "insufficient_quota",
        code: "insufficient_quota",
      },
    }),
  });
  assert.equal(error.code, "provider_auth");
  assert.equal(error.retryAfterSeconds, undefined);
});

test("an error frame whose status or type names an Object member is classified by the catalog alone", () => {
  for (const frame of [
    { error: { status: "constructor", message: "x" } },
    { error: { type: "toString", message: "x" } },
    { error: { status: "__proto__", type: "hasOwnProperty" } },
  ]) {
    const error = classifyStreamErrorFrame(frame);
    assert.equal(error.code, "provider_unavailable", JSON.stringify(frame));
    assert.equal(error.upstreamStatus, 500, JSON.stringify(frame));
    assert.doesNotMatch(error.message, /native code|function/);
  }
});

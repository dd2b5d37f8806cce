/**
 * Fixture re-encoding: every recorded answer in `test/fixtures/recorded` (support/recordings.ts) is
 * served by the fake upstream of its provider kind, through a gateway route of that kind, and
 * requested through all three ingress formats with the official clients — streamed recordings with
 * the clients' stream helpers, recorded bodies without streaming, error bodies both ways.
 *
 * Each client must accept the output, and end up with what the recording says, computed from the
 * recording independently of the gateway: the visible text, the function calls (name and
 * arguments), the finish value the format's table gives for the recorded reason, and the usage
 * mapped to the format. Chat and Responses bodies, chunks and events (the final
 * `response.completed` response included) validate against OpenAI's published schema. Raw
 * recordings are never validated themselves: OpenAI's own recordings fail their schema.
 */
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import { ERROR_CATALOG, type ErrorCode } from "../../src/errors/catalog.js";
import { expectedUsage, FORMAT_FINISH } from "./support/expectations.js";
import {
  DEFAULT_MESSAGES_MAX_TOKENS,
  FORMAT_DRIVERS,
  FORMAT_IDS,
  type FormatId,
  type TurnOutcome,
} from "./support/format-drivers.js";
import {
  assertInBandError,
  assertSucceeded,
  type CellContext,
  checkErrorBody,
  checkWire,
  startCellContext,
} from "./support/matrix.js";
import { loadRecordings, type RecordedExpectation, type Recording } from "./support/recordings.js";

// biome-ignore lint/suspicious/noExplicitAny: error bodies are read field by field.
type Json = any;

const recordings = loadRecordings();

/**
 * Recordings the gateway answers differently from a plain replay, by design (docs/conformance.md),
 * with the gateway error code every format must get instead.
 */
const REFUSED_BY_DESIGN: Record<string, { code: ErrorCode; why: string }> = {
  "google/gemini/google-stream-tool-call-arguments.chunks.txt": {
    code: "provider_unavailable",
    why: "Vertex-only partialArgs streaming, which the google adapter never requests and refuses",
  },
};

/** Cells failing because of a known gateway bug: test name → what is wrong, where. */
const TODO: Record<string, string> = {};

let context: CellContext;

before(async () => {
  context = await startCellContext({ validate: true });
});
after(async () => {
  await context?.gateway.close();
});
for (const recording of recordings) {
  for (const format of FORMAT_IDS) {
    const name = `fixture ${recording.name} → ${format}${recording.stream ? " (stream)" : ""}`;
    test(name, TODO[name] === undefined ? {} : { todo: TODO[name] }, async () => {
      await replay(recording, format);
    });
  }
}

async function replay(recording: Recording, format: FormatId): Promise<void> {
  const upstream = context.gateway.upstreams[recording.kind];
  const requestMark = upstream.requests.length;
  const tapMark = context.tap.exchanges.length;
  upstream.serve(recording.reply);
  const outcome = await FORMAT_DRIVERS[format].send(
    context.clients,
    { model: upstream.model, text: "Replay the recording." },
    recording.stream,
  );
  assert.equal(upstream.requests.length - requestMark, 1, "one upstream call");
  const { expected } = recording;
  const refused = REFUSED_BY_DESIGN[recording.name];

  // An error before any output is a plain HTTP error, streamed request or not (docs/errors.md).
  const failsBeforeOutput = expected.inBandError === true && expected.text === "";
  if (refused !== undefined || expected.httpStatus !== undefined || failsBeforeOutput) {
    assertGatewayHttpError(format, outcome, refused?.code ?? expectedGatewayCode(expected));
    await checkErrorBody(context, format, context.tap.since(tapMark));
    return;
  }
  if (expected.inBandError) {
    assertInBandError(format, outcome, expectedGatewayCode(expected), expected.text);
    await checkWire(context, format, recording.stream, context.tap.since(tapMark));
    return;
  }

  assertSucceeded(outcome);
  assert.equal(outcome.text, expected.text, "visible text");
  assert.deepEqual(
    outcome.toolCalls.map((call) => ({ name: call.name, input: JSON.parse(call.arguments) })),
    expected.toolCalls,
    "function calls",
  );
  if (expected.finish !== undefined)
    assert.equal(outcome.finish, FORMAT_FINISH[format][expected.finish], "finish");
  if (expected.usage !== undefined) {
    // Output is reported and billed at most at the cap sent upstream (docs/metering.md); only the
    // Messages driver sends one (max_tokens is required there), below some recordings' output.
    const cap = format === "messages" ? DEFAULT_MESSAGES_MAX_TOKENS : Number.POSITIVE_INFINITY;
    const usage = {
      ...expected.usage,
      output: Math.min(expected.usage.output, cap),
      reasoning: Math.min(expected.usage.reasoning, cap),
    };
    assert.deepEqual(outcome.usage, expectedUsage(format, usage), "usage");
  }
  await checkWire(context, format, recording.stream, context.tap.since(tapMark));
}

/**
 * The gateway code for a recorded upstream error: docs/errors.md, "Upstream errors", plus the
 * classifier's account rule (402, or OpenAI's `insufficient_quota`: the gateway's upstream account
 * is out of funds, which the caller cannot fix → provider_auth). In-band errors carry no status.
 */
function expectedGatewayCode(expected: RecordedExpectation): ErrorCode {
  const { type, code } = expected.upstreamError ?? {};
  const status = expected.httpStatus;
  if (status === 402 || type === "insufficient_quota" || code === "insufficient_quota")
    return "provider_auth";
  if (status === undefined) {
    if (type === "overloaded_error") return "provider_overloaded";
    if (type === "rate_limit_error" || code === "rate_limit_exceeded") return "provider_rate_limit";
    return "provider_unavailable";
  }
  if (status === 401 || status === 403) return "provider_auth";
  if (status === 429) return "provider_rate_limit";
  if (status === 529) return "provider_overloaded";
  if (status === 408 || status === 504) return "provider_timeout";
  if (status >= 500) return "provider_unavailable";
  return "invalid_request";
}

/** A plain HTTP error in the format's envelope, with the catalog's status and Retry-After rule. */
function assertGatewayHttpError(format: FormatId, outcome: TurnOutcome, code: ErrorCode): void {
  const entry = ERROR_CATALOG[code];
  const error = outcome.error;
  if (format === "messages") {
    assert.ok(error instanceof Anthropic.APIError, `expected an Anthropic APIError, got ${String(error)}`);
    const body = error.error as Json;
    assert.equal(body.type, "error");
    assert.equal(body.error.code, code);
    assert.equal(body.error.type, entry.anthropicType);
  } else {
    assert.ok(error instanceof OpenAI.APIError, `expected an OpenAI APIError, got ${String(error)}`);
    const body = error.error as Json;
    assert.equal(body.code, code);
    assert.equal(body.type, entry.openaiType);
  }
  assert.equal(error.status, entry.status);
  const retryAfter = error.headers?.get("retry-after") ?? null;
  if (entry.retryable) assert.match(retryAfter ?? "", /^\d+$/, "Retry-After on a retryable error");
  else assert.equal(retryAfter, null, "no Retry-After on a non-retryable error");
}

/**
 * Fuzzed request bodies against a real gateway on loopback (fake upstream), for the three
 * generation endpoints and count_tokens: malformed text and bytes, odd JSON, valid bodies with one
 * field mutated, odd Content-Type and Content-Encoding headers. Properties of every answer:
 * - never a 5xx, and a complete answer within a deadline;
 * - an error is in the endpoint's envelope (messages and count_tokens: Anthropic's) with a catalog
 *   code, the catalog's status, type and Retry-After rule;
 * - an `invalid_request` caused by one mutated field names that field (`param`; in the messages
 *   envelope, which has no param, the message);
 * - a refused request writes nothing: no usage record, no upstream call, and at the end no
 *   reservation is left and the balance moved only by what the answered requests cost.
 * Run counts, seeds and replay: test/helpers/fuzz.ts.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { brotliCompressSync, deflateSync, gzipSync } from "node:zlib";
import fc from "fast-check";
import { checkProperty } from "../helpers/fuzz.js";
import { checkAnswer, type Envelope } from "../helpers/fuzz-answers.js";
import {
  invalidUtf8,
  isWithinParam,
  type Mutation,
  malformedBodyTexts,
  mutatedBodies,
  mutatedParam,
  serialise,
} from "../helpers/fuzz-bodies.js";
import { createRawClient, type RawAnswer, type RawClient } from "../helpers/raw-http.js";
import { requireMode } from "../helpers/storage-modes.js";
import { type GatewayMode, startTestGateway, TEST_MODEL, type TestGateway } from "../helpers/test-gateway.js";

const DEADLINE_MS = 10_000;

interface Endpoint {
  path: string;
  envelope: Envelope;
  /** Valid bodies of the endpoint. */
  valid: fc.Arbitrary<Record<string, unknown>>;
  auth: "bearer" | "x-api-key";
}

const weather = { type: "object", properties: { city: { type: "string" } }, required: ["city"] };
/** A 1×1 PNG and a short text file, base64: media the decoders check, size and pass on. */
const PNG_BASE64 =
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==";
const TEXT_BASE64 = Buffer.from("Paris forecast: sunny").toString("base64");

/** tool_choice only with tools: a choice naming an undefined tool is a (correct) cross-field error. */
function withToolsForChoice(body: Record<string, unknown>): Record<string, unknown> {
  if (body.tools !== undefined || body.tool_choice === undefined) return body;
  const { tool_choice: _dropped, ...rest } = body;
  return rest;
}

const chatBody = fc
  .record(
    {
      model: fc.constant(TEST_MODEL),
      messages: fc.constant([
        { role: "system", content: "Be brief." },
        {
          role: "user",
          content: [
            { type: "text", text: "Weather in Paris?", cache_control: { type: "ephemeral" } },
            { type: "image_url", image_url: { url: `data:image/png;base64,${PNG_BASE64}`, detail: "low" } },
            { type: "file", file: { filename: "f.txt", file_data: `data:text/plain;base64,${TEXT_BASE64}` } },
          ],
        },
        {
          role: "assistant",
          content: null,
          tool_calls: [
            {
              id: "call_1",
              type: "function",
              function: { name: "get_weather", arguments: '{"city":"Paris"}' },
            },
          ],
        },
        { role: "tool", tool_call_id: "call_1", content: "sunny" },
        { role: "user", content: "And tomorrow? @@BYTES@@" },
      ]),
      tools: fc.constant([{ type: "function", function: { name: "get_weather", parameters: weather } }]),
      tool_choice: fc.constantFrom("auto", "none", {
        type: "function",
        function: { name: "get_weather" },
      }),
      temperature: fc.constantFrom(0, 0.7, 2),
      top_p: fc.constant(0.9),
      max_tokens: fc.constantFrom(1, 64),
      max_completion_tokens: fc.constant(32),
      stop: fc.constantFrom("END", ["END", "STOP"]),
      stream: fc.boolean(),
      stream_options: fc.constant({ include_usage: true }),
      response_format: fc.constantFrom(
        { type: "text" },
        { type: "json_object" },
        { type: "json_schema", json_schema: { name: "w", schema: weather } },
      ),
      seed: fc.constant(7),
      user: fc.constant("user-1"),
      n: fc.constant(1),
      logit_bias: fc.constant({ "50256": -100 }),
      parallel_tool_calls: fc.boolean(),
      reasoning_effort: fc.constantFrom("low", "high"),
      presence_penalty: fc.constant(0.5),
      frequency_penalty: fc.constant(-0.5),
    },
    { requiredKeys: ["model", "messages"] },
  )
  .map(withToolsForChoice);

const responsesBody = fc
  .record(
    {
      model: fc.constant(TEST_MODEL),
      input: fc.constantFrom<unknown>("Weather in Paris? @@BYTES@@", [
        {
          role: "user",
          content: [
            { type: "input_text", text: "Weather in Paris? @@BYTES@@" },
            { type: "input_image", image_url: `data:image/png;base64,${PNG_BASE64}`, detail: "auto" },
            { type: "input_file", filename: "f.txt", file_data: `data:text/plain;base64,${TEXT_BASE64}` },
          ],
        },
        { type: "function_call", call_id: "call_1", name: "get_weather", arguments: '{"city":"Paris"}' },
        { type: "function_call_output", call_id: "call_1", output: "sunny" },
        { role: "user", content: "And tomorrow?" },
      ]),
      instructions: fc.constant("Be brief."),
      tools: fc.constant([{ type: "function", name: "get_weather", parameters: weather }]),
      tool_choice: fc.constantFrom("auto", "required", { type: "function", name: "get_weather" }),
      temperature: fc.constant(0.5),
      top_p: fc.constant(1),
      max_output_tokens: fc.constantFrom(16, 64),
      stream: fc.boolean(),
      store: fc.constant(false),
      text: fc.constantFrom(
        { format: { type: "text" } },
        { format: { type: "json_schema", name: "w", schema: weather } },
      ),
      user: fc.constant("user-1"),
      metadata: fc.constant({ run: "fuzz" }),
      reasoning: fc.constant({ effort: "low", summary: "auto" }),
      parallel_tool_calls: fc.boolean(),
    },
    { requiredKeys: ["model", "input"] },
  )
  .map(withToolsForChoice);

const messagesFields = {
  model: fc.constant(TEST_MODEL),
  messages: fc.constant([
    { role: "user", content: "Weather in Paris? @@BYTES@@" },
    {
      role: "assistant",
      content: [
        { type: "text", text: "Let me look." },
        { type: "tool_use", id: "toolu_1", name: "get_weather", input: { city: "Paris" } },
      ],
    },
    {
      role: "user",
      content: [
        { type: "tool_result", tool_use_id: "toolu_1", content: [{ type: "text", text: "sunny" }] },
        { type: "text", text: "And tomorrow?" },
        { type: "image", source: { type: "base64", media_type: "image/png", data: PNG_BASE64 } },
        {
          type: "document",
          source: { type: "base64", media_type: "text/plain", data: TEXT_BASE64 },
          title: "forecast",
          cache_control: { type: "ephemeral" },
        },
      ],
    },
  ]),
  system: fc.constantFrom<unknown>("Be brief.", [
    { type: "text", text: "Be brief.", cache_control: { type: "ephemeral" } },
  ]),
  tools: fc.constant([{ name: "get_weather", description: "Weather by city", input_schema: weather }]),
  tool_choice: fc.constantFrom({ type: "auto" }, { type: "any" }, { type: "tool", name: "get_weather" }),
  thinking: fc.constantFrom({ type: "disabled" }, { type: "enabled", budget_tokens: 1024 }),
};

/** Extended thinking needs an output cap above its budget and no forced tool choice. */
function withRoomForThinking(body: Record<string, unknown>): Record<string, unknown> {
  const thinking = body.thinking as { type: string } | undefined;
  if (thinking?.type !== "enabled") return body;
  const { tool_choice: _dropped, temperature: _t, top_k: _k, top_p: _p, ...rest } = body;
  return body.max_tokens === undefined ? rest : { ...rest, max_tokens: 2048 };
}

const messagesBody = fc
  .record(
    {
      ...messagesFields,
      max_tokens: fc.constantFrom(1, 64),
      temperature: fc.constant(0.5),
      top_k: fc.constant(40),
      top_p: fc.constant(0.9),
      stop_sequences: fc.constant(["END"]),
      stream: fc.boolean(),
      metadata: fc.constant({ user_id: "user-1" }),
    },
    { requiredKeys: ["model", "messages", "max_tokens"] },
  )
  .map(withToolsForChoice)
  .map(withRoomForThinking);

const countTokensBody = fc
  .record(messagesFields, { requiredKeys: ["model", "messages"] })
  .map(withToolsForChoice)
  .map(withRoomForThinking);

const ENDPOINTS: Endpoint[] = [
  { path: "/api/v1/chat/completions", envelope: "common", valid: chatBody, auth: "bearer" },
  { path: "/api/v1/responses", envelope: "common", valid: responsesBody, auth: "bearer" },
  { path: "/api/v1/messages", envelope: "messages", valid: messagesBody, auth: "x-api-key" },
  { path: "/api/v1/messages/count_tokens", envelope: "messages", valid: countTokensBody, auth: "x-api-key" },
];

/** What is sent: the body bytes, the headers beyond auth, and the mutation when there is one. */
interface FuzzRequest {
  body: string | Uint8Array;
  contentType: string | undefined;
  contentEncoding: string | undefined;
  mutation?: Mutation;
  /** The request must be refused as invalid_request with a message like this. */
  refusal?: RegExp;
}

const contentTypes = fc.constantFrom(
  "application/json",
  "application/json",
  "application/json; charset=utf-8",
  undefined,
  "text/plain",
  "application/x-www-form-urlencoded",
  "multipart/form-data; boundary=x",
  "application/json; charset=utf-16",
  "APPLICATION/JSON",
  "application/vnd.api+json",
  ";;;",
);

const encodings = ["gzip", "deflate", "br", "identity", "gzip, br", "x-unknown", "GZIP"] as const;

function compress(bytes: Buffer, encoding: string): Buffer {
  if (encoding.toLowerCase() === "gzip") return gzipSync(bytes);
  if (encoding === "deflate") return deflateSync(bytes);
  if (encoding === "br") return brotliCompressSync(bytes);
  return bytes;
}

/** `@@BYTES@@` (a marker in the valid bodies' text) replaced by bytes that are not UTF-8, or dropped. */
function withBytes(text: string, bytes: Uint8Array | undefined): string | Uint8Array {
  if (bytes === undefined) return text.replaceAll("@@BYTES@@", "");
  const parts = text.split("@@BYTES@@").map((part) => Buffer.from(part, "utf8"));
  return Buffer.concat(parts.flatMap((part, index) => (index === 0 ? [part] : [Buffer.from(bytes), part])));
}

function requestsFor(endpoint: Endpoint): fc.Arbitrary<FuzzRequest> {
  const mutated = fc.tuple(mutatedBodies(endpoint.valid), fc.option(invalidUtf8, { freq: 6 })).map(
    ([{ mutation, text }, bytes]): FuzzRequest => ({
      body: withBytes(text, bytes ?? undefined),
      contentType: "application/json",
      contentEncoding: undefined,
      // A field error must name the mutated field only when the mutation is the only fault.
      ...(bytes === null ? { mutation } : text.includes("@@BYTES@@") ? { refusal: /not valid UTF-8/ } : {}),
    }),
  );
  const malformed = fc
    .tuple(malformedBodyTexts, contentTypes)
    .map(([body, contentType]): FuzzRequest => ({ body, contentType, contentEncoding: undefined }));
  const oddHeaders = fc
    .tuple(endpoint.valid, contentTypes, fc.option(fc.constantFrom(...encodings)), fc.boolean())
    .map(([body, contentType, encoding, compressed]): FuzzRequest => {
      const bytes = Buffer.from(serialise(body).replaceAll("@@BYTES@@", ""), "utf8");
      return {
        body: encoding !== null && compressed ? compress(bytes, encoding) : bytes,
        contentType,
        contentEncoding: encoding ?? undefined,
        // Compressed bodies are refused whatever the bytes; identity is the body as is.
        ...(encoding !== null && encoding !== "identity"
          ? { refusal: /Content-Encoding .* is not supported/ }
          : {}),
      };
    });
  const deep = fc.integer({ min: 1, max: 300 }).map(
    (depth): FuzzRequest => ({
      body: `{"model":"${TEST_MODEL}","messages":${"[".repeat(depth)}${"]".repeat(depth)},"x":${'{"a":'.repeat(depth)}1${"}".repeat(depth)}}`,
      contentType: "application/json",
      contentEncoding: undefined,
    }),
  );
  return fc.oneof(
    { weight: 6, arbitrary: mutated },
    { weight: 2, arbitrary: malformed },
    { weight: 2, arbitrary: oddHeaders },
    { weight: 1, arbitrary: deep },
  );
}

/**
 * A field error names the mutated field, something inside it (a replaced object lacks a required
 * member), or the object that holds it (an unknown or duplicated key, a deleted required field).
 */
function isRelatedParam(param: string, mutated: string | null): boolean {
  if (mutated === null) return true;
  if (isWithinParam(param, mutated) || isWithinParam(mutated, param)) return true;
  // A changed `type` makes the item another kind, whose own fields are then what is wrong.
  if (mutated.endsWith(".type")) return isWithinParam(param, mutated.slice(0, -".type".length));
  // Cross-field rules: tool_choice must name a tool of `tools`.
  return param === "tool_choice" && isWithinParam(mutated, "tools");
}

interface Ledger {
  /** Request ids of answers ≥ 400. */
  refused: string[];
  /** Request ids of answers < 400 on generation endpoints (each has a usage record). */
  answered: string[];
}

async function sendFuzzed(
  context: TestGateway,
  client: RawClient,
  endpoint: Endpoint,
  request: FuzzRequest,
  ledger: Ledger,
): Promise<void> {
  const headers: Record<string, string> =
    endpoint.auth === "bearer"
      ? { authorization: `Bearer ${context.apiKey}` }
      : { "x-api-key": context.apiKey, "anthropic-version": "2023-06-01" };
  if (request.contentType !== undefined) headers["content-type"] = request.contentType;
  if (request.contentEncoding !== undefined) headers["content-encoding"] = request.contentEncoding;
  const upstreamCallsBefore = context.upstream.requests.length;
  const answer: RawAnswer = await client.send({
    method: "POST",
    path: endpoint.path,
    headers,
    body: request.body,
    deadlineMs: DEADLINE_MS,
  });
  const bodyText =
    typeof request.body === "string" ? request.body : Buffer.from(request.body).toString("latin1");
  const what = `POST ${endpoint.path} [${request.contentType ?? "no content-type"}${
    request.contentEncoding ? `, ${request.contentEncoding}` : ""
  }] ${bodyText.slice(0, 300)}`;
  const error = checkAnswer(answer, endpoint.envelope, what);
  const requestId = answer.headers["x-request-id"] as string | undefined;
  assert.ok(requestId, `no X-Request-Id: ${what}`);
  assert.ok(error !== undefined || request.refusal === undefined, `not refused: ${what}`);
  if (error === undefined) {
    if (endpoint.path !== "/api/v1/messages/count_tokens") ledger.answered.push(requestId);
    return;
  }
  assert.equal(error.requestId, requestId, `request_id of the envelope: ${what}`);
  if (request.refusal !== undefined) {
    assert.equal(error.code, "invalid_request", `${what} → ${error.message}`);
    assert.match(error.message, request.refusal, what);
  }
  ledger.refused.push(requestId);
  assert.equal(
    context.upstream.requests.length,
    upstreamCallsBefore,
    `a refused request reached the upstream: ${what}`,
  );
  assert.equal(
    await context.gateway.store.generations.get(requestId, context.workspaceId),
    null,
    `a refused request left a usage record: ${what}`,
  );
  if (request.mutation !== undefined && error.code === "invalid_request") {
    const mutated = mutatedParam(request.mutation);
    if (endpoint.envelope === "common") {
      const param = error.param;
      if (mutated !== null)
        assert.ok(param, `field error without param (mutated ${mutated}): ${what} → ${error.message}`);
      if (param) {
        assert.ok(
          isRelatedParam(param, mutated),
          `param ${param} for mutated ${mutated}: ${what} → ${error.message}`,
        );
      }
    } else if (mutated !== null) {
      const field = String(mutated.split(/[.[]/)[0]);
      assert.ok(
        error.message.includes(field),
        `message does not name ${mutated}: ${what} → ${error.message}`,
      );
    }
  }
}

/** After the run: no reservation left, and the balance moved by exactly the answered requests' cost. */
async function checkNothingLeftBehind(context: TestGateway, ledger: Ledger, balanceBefore: number) {
  const { gateway, workspaceId, keyId } = context;
  let reserved = await gateway.spendGuard.readReserved(workspaceId, keyId);
  for (let wait = 0; wait < 40 && (reserved?.keyMicroUsd || reserved?.workspaceMicroUsd); wait++) {
    await new Promise((resolve) => setTimeout(resolve, 50));
    reserved = await gateway.spendGuard.readReserved(workspaceId, keyId);
  }
  assert.deepEqual(reserved, { keyMicroUsd: 0, workspaceMicroUsd: 0 }, "reservations left behind");
  let spent = 0;
  for (const id of ledger.answered) {
    const record = await gateway.store.generations.get(id, workspaceId);
    assert.ok(record, `answered request ${id} has no usage record`);
    spent += record.costMicroUsd ?? 0;
  }
  const workspace = await gateway.store.workspaces.get(workspaceId);
  assert.equal(
    workspace?.balanceMicroUsd,
    balanceBefore - spent,
    "balance moved by more than the answered requests",
  );
}

const RUNS: Record<GatewayMode, number> = { embedded: 120, distributed: 40 };
const VALID_RUNS = 10;

for (const mode of ["embedded", "distributed"] as const) {
  test(`fuzzed bodies on every generation endpoint [${mode}]`, async (t) => {
    if (mode === "distributed") {
      if (!(await requireMode(t, "postgres")) || !(await requireMode(t, "redis"))) return;
    }
    const context = await startTestGateway(mode);
    const client = createRawClient(context.url);
    try {
      const balanceBefore = (await context.gateway.store.workspaces.get(context.workspaceId))!
        .balanceMicroUsd;
      const ledger: Ledger = { refused: [], answered: [] };
      for (const endpoint of ENDPOINTS) {
        // The fuzz is only as good as its starting points: the unmutated bodies must be answered.
        await t.test(`${endpoint.path}: the valid bodies are answered`, async (t) => {
          await checkProperty(
            t,
            fc.asyncProperty(endpoint.valid, async (body) => {
              const answer = await client.send({
                method: "POST",
                path: endpoint.path,
                headers: {
                  "content-type": "application/json",
                  ...(endpoint.auth === "bearer"
                    ? { authorization: `Bearer ${context.apiKey}` }
                    : { "x-api-key": context.apiKey, "anthropic-version": "2023-06-01" }),
                },
                body: serialise(body).replaceAll("@@BYTES@@", ""),
                deadlineMs: DEADLINE_MS,
              });
              assert.equal(answer.status, 200, `${serialise(body)} → ${answer.text.slice(0, 500)}`);
              if (endpoint.path !== "/api/v1/messages/count_tokens") {
                ledger.answered.push(answer.headers["x-request-id"] as string);
              }
            }),
            { runs: VALID_RUNS },
          );
        });
        await t.test(endpoint.path, async (t) => {
          await checkProperty(
            t,
            fc.asyncProperty(requestsFor(endpoint), (request) =>
              sendFuzzed(context, client, endpoint, request, ledger),
            ),
            { runs: RUNS[mode], timeoutMs: DEADLINE_MS + 1000 },
          );
        });
      }
      await t.test("nothing left behind by refused requests", () =>
        checkNothingLeftBehind(context, ledger, balanceBefore),
      );
      t.diagnostic(`${ledger.refused.length} refused, ${ledger.answered.length} answered`);
    } finally {
      client.close();
      await context.close();
    }
  });
}

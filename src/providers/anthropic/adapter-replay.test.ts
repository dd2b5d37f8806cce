/**
 * Replays the recorded Anthropic traffic in `test/fixtures/recorded/anthropic/messages/` through
 * the fake upstream and the adapter. Expected values are computed from the recordings with a plain
 * line split, independent of the adapter's SSE reader.
 */
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { createTestCall } from "../../../test/helpers/adapter-inputs.js";
import {
  anthropicReply,
  type FakeAnthropicUpstream,
  startFakeAnthropicUpstream,
} from "../../../test/helpers/fake-anthropic-upstream.js";
import { recordedPath } from "../../../test/helpers/fixture-paths.js";
import type { AssistantContentPart, CanonicalMessage, CanonicalStreamPart } from "../../canonical/index.js";
import type { UpstreamCall } from "../provider-adapter.js";
import { createUpstreamHttpClient } from "../shared/http-client.js";
import { createAnthropicAdapter } from "./adapter.js";
import { buildAnthropicRequest } from "./build-request.js";

const fixtureDir = recordedPath("anthropic", "messages");
const fixtureFiles = readdirSync(fixtureDir).sort();

let upstream: FakeAnthropicUpstream;
const httpClient = createUpstreamHttpClient();
const adapter = createAnthropicAdapter({ httpClient });

before(async () => {
  upstream = await startFakeAnthropicUpstream();
});

after(async () => {
  await httpClient.destroy();
  await upstream.close();
});

// biome-ignore lint/suspicious/noExplicitAny: recorded wire JSON is read field by field.
type Json = any;

interface Expected {
  text: string;
  /** Concatenated `input_json_delta` fragments per client tool_use block, in order. */
  toolArguments: string[];
  /** Thinking text and signature per thinking block; redacted data per redacted block. */
  thinking: Array<{ text: string; signature?: string; redactedData?: string }>;
  stopReason?: string;
  outputTokens: number;
}

/** Expected results from the `data:` payloads, read without any SSE library. */
function computeExpected(payloads: string[]): Expected {
  const expected: Expected = { text: "", toolArguments: [], thinking: [], outputTokens: 0 };
  const kinds = new Map<number, { type: string; slot: number }>();
  for (const payload of payloads) {
    const event: Json = JSON.parse(payload);
    if (event.type === "message_start") expected.outputTokens = event.message.usage.output_tokens;
    if (event.type === "content_block_start") {
      const block = event.content_block;
      let slot = -1;
      if (block.type === "tool_use") slot = expected.toolArguments.push("") - 1;
      if (block.type === "thinking") slot = expected.thinking.push({ text: "", signature: "" }) - 1;
      if (block.type === "redacted_thinking")
        slot = expected.thinking.push({ text: "", redactedData: block.data }) - 1;
      kinds.set(event.index, { type: block.type, slot });
    }
    if (event.type === "content_block_delta") {
      const kind = kinds.get(event.index);
      const delta = event.delta;
      if (kind?.type === "text" && delta.type === "text_delta") expected.text += delta.text;
      if (kind?.type === "tool_use" && delta.type === "input_json_delta") {
        expected.toolArguments[kind.slot] += delta.partial_json;
      }
      if (kind?.type === "thinking" && delta.type === "thinking_delta")
        expected.thinking[kind.slot].text += delta.thinking;
      if (kind?.type === "thinking" && delta.type === "signature_delta") {
        expected.thinking[kind.slot].signature = delta.signature;
      }
    }
    if (event.type === "message_delta") {
      expected.stopReason = event.delta.stop_reason;
      expected.outputTokens = event.usage.output_tokens;
    }
  }
  expected.toolArguments = expected.toolArguments.map((args) => (args === "" ? "{}" : args));
  return expected;
}

function payloadsOfSse(body: string): string[] {
  return body
    .split(/\r?\n/)
    .filter((line) => line.startsWith("data:"))
    .map((line) => line.slice(5).trim());
}

function callFor(upstreamModel = "upstream-model-1"): UpstreamCall {
  return { ...createTestCall({ provider: { kind: "anthropic", baseUrl: upstream.baseUrl } }), upstreamModel };
}

async function streamParts(): Promise<CanonicalStreamPart[]> {
  const parts: CanonicalStreamPart[] = [];
  for await (const part of adapter.stream(callFor())) parts.push(part);
  return parts;
}

function assertReplay(parts: CanonicalStreamPart[], expected: Expected, name: string): void {
  assert.ok(!parts.some((part) => part.type === "error"), `${name}: no error part`);
  assert.equal(parts[0]?.type, "response-metadata", `${name}: metadata first`);
  const text = parts.map((part) => (part.type === "text-delta" ? part.delta : "")).join("");
  assert.equal(text, expected.text, `${name}: text reassembles`);

  const calls = parts.flatMap((part) => (part.type === "tool-call" ? [part] : []));
  assert.deepEqual(
    calls.map((call) => call.arguments),
    expected.toolArguments,
    `${name}: tool arguments byte-exact`,
  );
  calls.forEach((call, index) => {
    assert.equal(call.index, index, `${name}: tool index = order`);
    assert.doesNotThrow(() => JSON.parse(call.arguments), `${name}: arguments are JSON`);
    const deltas = parts
      .map((part) => (part.type === "tool-input-delta" && part.id === call.id ? part.delta : ""))
      .join("");
    assert.equal(deltas, call.arguments, `${name}: deltas reassemble to the call`);
  });

  const reasoning: Expected["thinking"] = [];
  let current = "";
  for (const part of parts) {
    if (part.type === "reasoning-delta") current += part.delta;
    if (part.type === "reasoning-end") {
      const state = part.providerState;
      reasoning.push({
        text: current,
        ...(state?.signature === undefined ? {} : { signature: state.signature }),
        ...(state?.redactedData === undefined ? {} : { redactedData: state.redactedData }),
      });
      current = "";
    }
  }
  assert.deepEqual(reasoning, expected.thinking, `${name}: reasoning text and state`);

  const usage = parts.findLast((part) => part.type === "usage");
  assert.ok(usage?.type === "usage" && usage.usage.inputTokens > 0, `${name}: input usage > 0`);
  assert.equal(usage.usage.outputTokens, expected.outputTokens, `${name}: last cumulative output count`);
  const finish = parts.at(-1);
  assert.equal(finish?.type, "finish", `${name}: finish part last`);
  assert.equal(
    finish?.type === "finish" ? finish.rawReason : undefined,
    expected.stopReason,
    `${name}: raw reason`,
  );
  assert.notEqual(finish?.type === "finish" ? finish.reason : "other", "other", `${name}: reason mapped`);
}

const sseFiles = fixtureFiles.filter((file) => file.endsWith(".sse"));
const chunkFiles = fixtureFiles.filter((file) => file.endsWith(".chunks.txt"));
const jsonResponseFiles = fixtureFiles.filter(
  (file) =>
    !file.startsWith("error-") &&
    (file.endsWith(".response.json") || (file.endsWith(".json") && !file.includes(".request."))),
);

test("recorded .sse streams replay through the adapter", async (t) => {
  assert.ok(sseFiles.includes("stream-thinking-text.response.sse"));
  for (const file of sseFiles) {
    await t.test(file, async () => {
      const body = readFileSync(join(fixtureDir, file));
      const expected = computeExpected(payloadsOfSse(body.toString("utf8")));
      // Odd-sized pieces split frames, padded JSON and multi-byte characters at arbitrary points.
      upstream.enqueue(anthropicReply.raw(body, { chunkSize: 61 }));
      assertReplay(await streamParts(), expected, file);
    });
  }
});

test("recorded .chunks.txt payloads (re-framed with event lines) replay through the adapter", async (t) => {
  assert.ok(chunkFiles.length >= 4);
  for (const file of chunkFiles) {
    await t.test(file, async () => {
      const payloads = readFileSync(join(fixtureDir, file), "utf8")
        .split("\n")
        .filter((line) => line.trim() !== "");
      const expected = computeExpected(payloads);
      const body = payloads
        .map((payload) => `event: ${JSON.parse(payload).type}\ndata: ${payload}\n\n`)
        .join("");
      upstream.enqueue(anthropicReply.raw(body, { chunkSize: 97 }));
      assertReplay(await streamParts(), expected, file);
    });
  }
});

test("recorded non-streamed messages parse through generate", async (t) => {
  assert.ok(jsonResponseFiles.length >= 6);
  for (const file of jsonResponseFiles) {
    await t.test(file, async () => {
      const body: Json = JSON.parse(readFileSync(join(fixtureDir, file), "utf8"));
      upstream.enqueue(anthropicReply.json(body));
      const result = await adapter.generate(callFor());
      const blocks: Json[] = body.content;
      const text = result.content.flatMap((part) => (part.type === "text" ? [part.text] : [])).join("");
      assert.equal(text, blocks.flatMap((block) => (block.type === "text" ? [block.text] : [])).join(""));
      assert.deepEqual(
        result.content.flatMap((part) =>
          part.type === "tool-call" ? [[part.id, part.name, JSON.parse(part.arguments)]] : [],
        ),
        blocks.flatMap((block) => (block.type === "tool_use" ? [[block.id, block.name, block.input]] : [])),
      );
      assert.deepEqual(
        result.content.flatMap((part) => (part.type === "reasoning" ? [part.providerState?.signature] : [])),
        blocks.flatMap((block) => (block.type === "thinking" ? [block.signature] : [])),
      );
      const usage = body.usage;
      assert.equal(
        result.usage.inputTokens,
        usage.input_tokens + usage.cache_read_input_tokens + usage.cache_creation_input_tokens,
      );
      assert.ok(result.usage.inputTokens > 0 && result.usage.outputTokens > 0);
      assert.equal(result.usage.cachedInputTokens, usage.cache_read_input_tokens);
      assert.equal(
        result.usage.cacheWriteTokens + result.usage.cacheWrite1hTokens,
        usage.cache_creation_input_tokens,
      );
      assert.equal(result.rawFinishReason, body.stop_reason);
      assert.notEqual(result.finishReason, "other");
      assert.equal(result.upstreamModel, body.model);
    });
  }
});

test("recorded HTTP error bodies classify as invalid_request with Anthropic's message", async (t) => {
  for (const file of fixtureFiles.filter((name) => /^error-(\d+)-.*\.response\.json$/.test(name))) {
    await t.test(file, async () => {
      const status = Number(/^error-(\d+)-/.exec(file)?.[1]);
      const body: Json = JSON.parse(readFileSync(join(fixtureDir, file), "utf8"));
      upstream.enqueue(anthropicReply.json(body, { status }));
      await assert.rejects(adapter.generate(callFor()), {
        code: "invalid_request",
        message: body.error.message,
        upstreamStatus: status,
      });
    });
  }
});

/**
 * Multi-turn recordings: turn 1's answer, parsed and replayed as canonical history with turn 2's
 * tool results, must rebuild the messages turn 2 actually sent (signatures byte-identical, all
 * results of a parallel round in one user turn).
 */
test("recorded tool loops: turn 2's messages are rebuilt from turn 1's parsed answer", async (t) => {
  for (const name of ["thinking-tool-use-roundtrip", "parallel-tool-use-roundtrip"]) {
    await t.test(name, async () => {
      const read = (suffix: string): Json =>
        JSON.parse(readFileSync(join(fixtureDir, `${name}.${suffix}`), "utf8"));
      const request1 = read("1.request.json");
      const request2 = read("2.request.json");
      upstream.enqueue(anthropicReply.json(read("1.response.json")));
      const result = await adapter.generate(callFor(request1.model));

      const assistant: AssistantContentPart[] = result.content.flatMap((part): AssistantContentPart[] =>
        part.type === "tool-call"
          ? [{ type: "tool-call", id: part.id, name: part.name, arguments: part.arguments }]
          : part.type === "text" || part.type === "reasoning"
            ? [part]
            : [],
      );
      const results: Json[] = request2.messages[2].content;
      const history: CanonicalMessage[] = [
        {
          role: "user",
          content: request1.messages[0].content.map((block: Json) => ({ type: "text", text: block.text })),
        },
        { role: "assistant", content: assistant },
        {
          role: "tool",
          content: results.map((block) => ({
            type: "tool-result",
            toolCallId: block.tool_use_id,
            content: [{ type: "text", text: block.content }],
            isError: block.is_error,
          })),
        },
      ];
      const call = { ...callFor(request2.model), request: { ...callFor().request, messages: history } };
      const rebuilt = buildAnthropicRequest(call, { stream: false }).body.messages;
      const recorded = request2.messages.map((message: Json) => ({
        ...message,
        content: message.content.map((block: Json) =>
          block.type === "tool_result" && typeof block.content === "string"
            ? { ...block, content: [{ type: "text", text: block.content }] }
            : block,
        ),
      }));
      assert.deepEqual(rebuilt, recorded);
    });
  }
});

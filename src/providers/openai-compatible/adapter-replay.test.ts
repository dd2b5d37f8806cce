/**
 * Replays the recorded OpenAI Chat traffic in `test/fixtures/recorded/openai/chat/` through the fake
 * upstream and the adapter. Expected values are computed from the recordings with a plain line
 * split, independent of the adapter's SSE reader.
 */
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { createTestCall } from "../../../test/helpers/adapter-inputs.js";
import {
  type FakeOpenAiUpstream,
  fakeReply,
  startFakeOpenAiUpstream,
} from "../../../test/helpers/fake-openai-upstream.js";
import { recordedPath } from "../../../test/helpers/fixture-paths.js";
import type { CanonicalStreamPart } from "../../canonical/index.js";
import { createUpstreamHttpClient } from "../shared/http-client.js";
import { createOpenAiCompatibleAdapter } from "./adapter.js";

const fixtureDir = recordedPath("openai", "chat");
const fixtureFiles = readdirSync(fixtureDir).sort();

let upstream: FakeOpenAiUpstream;
const httpClient = createUpstreamHttpClient();
const adapter = createOpenAiCompatibleAdapter({ httpClient });

before(async () => {
  upstream = await startFakeOpenAiUpstream();
});

after(async () => {
  await httpClient.destroy();
  await upstream.close();
});

interface Expected {
  text: string;
  /** Concatenated argument fragments per tool-call index of choice 0. */
  toolArguments: string[];
  finishReason?: string;
  /** Text of the other choices (n>1), which must not leak into the result. */
  otherChoiceTexts: string[];
}

/** Expected results from the `data:` payloads, read without any SSE library. */
function computeExpected(payloads: string[]): Expected {
  const expected: Expected = { text: "", toolArguments: [], otherChoiceTexts: [] };
  for (const payload of payloads) {
    if (payload === "[DONE]") continue;
    const chunk = JSON.parse(payload);
    for (const choice of chunk.choices ?? []) {
      const delta = choice.delta ?? {};
      const piece = `${typeof delta.content === "string" ? delta.content : ""}${typeof delta.refusal === "string" ? delta.refusal : ""}`;
      if (choice.index !== 0) {
        expected.otherChoiceTexts[choice.index] = (expected.otherChoiceTexts[choice.index] ?? "") + piece;
        continue;
      }
      expected.text += piece;
      for (const call of delta.tool_calls ?? []) {
        expected.toolArguments[call.index] =
          (expected.toolArguments[call.index] ?? "") + (call.function?.arguments ?? "");
      }
      if (choice.finish_reason) expected.finishReason = choice.finish_reason;
    }
  }
  return expected;
}

function payloadsOfSse(body: string): string[] {
  return body
    .split(/\r?\n/)
    .filter((line) => line.startsWith("data:"))
    .map((line) => line.slice(5).trim());
}

async function streamParts(): Promise<CanonicalStreamPart[]> {
  const parts: CanonicalStreamPart[] = [];
  for await (const part of adapter.stream(createTestCall({ provider: { baseUrl: upstream.baseUrl } })))
    parts.push(part);
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
  for (const call of calls) {
    assert.doesNotThrow(() => JSON.parse(call.arguments), `${name}: arguments are JSON`);
    const deltas = parts
      .map((part) => (part.type === "tool-input-delta" && part.id === call.id ? part.delta : ""))
      .join("");
    assert.equal(deltas, call.arguments, `${name}: deltas reassemble to the call`);
  }
  const finish = parts.at(-1);
  assert.equal(finish?.type, "finish", `${name}: finish part last`);
  assert.ok(expected.finishReason !== undefined);
}

const sseFiles = fixtureFiles.filter((file) => file.endsWith(".sse"));
const chunkFiles = fixtureFiles.filter((file) => file.endsWith(".chunks.txt"));

test("recorded .sse streams replay through the adapter", async (t) => {
  assert.ok(sseFiles.includes("stream-n3-choices.sse"));
  assert.ok(sseFiles.some((file) => /^stream-tool-call-roundtrip\.\d+\.response\.sse$/.test(file)));
  for (const file of sseFiles) {
    await t.test(file, async () => {
      const body = readFileSync(join(fixtureDir, file));
      const expected = computeExpected(payloadsOfSse(body.toString("utf8")));
      // Odd-sized pieces split frames, JSON and multi-byte characters at arbitrary points.
      upstream.enqueue(fakeReply.raw(body, { chunkSize: 61 }));
      const parts = await streamParts();
      assertReplay(parts, expected, file);
      if (file === "stream-n3-choices.sse") {
        assert.equal(expected.otherChoiceTexts.length, 3);
        const text = parts.map((part) => (part.type === "text-delta" ? part.delta : "")).join("");
        for (const other of expected.otherChoiceTexts.slice(1)) assert.notEqual(text, other);
        assert.equal(parts.filter((part) => part.type === "text-start").length, 1);
      }
    });
  }
});

test("recorded .chunks.txt payloads (re-framed as SSE) replay through the adapter", async (t) => {
  for (const file of chunkFiles) {
    await t.test(file, async () => {
      const payloads = readFileSync(join(fixtureDir, file), "utf8")
        .split("\n")
        .filter((line) => line.trim() !== "");
      const expected = computeExpected(payloads);
      const body = `${payloads.map((payload) => `data: ${payload}\n\n`).join("")}data: [DONE]\n\n`;
      upstream.enqueue(fakeReply.raw(body, { chunkSize: 97 }));
      const parts = await streamParts();
      assertReplay(parts, expected, file);
      const usage = parts.findLast((part) => part.type === "usage");
      const lastUsage = JSON.parse(payloads.at(-1) ?? "{}").usage;
      assert.equal(
        usage?.type === "usage" ? usage.usage.outputTokens : undefined,
        lastUsage.completion_tokens,
      );
    });
  }
});

test("recorded non-streamed completions parse through generate", async (t) => {
  const files = fixtureFiles.filter(
    (file) => file === "openai-text.json" || (/\.response\.json$/.test(file) && !file.startsWith("error-")),
  );
  assert.ok(files.length >= 4);
  for (const file of files) {
    await t.test(file, async () => {
      const body = JSON.parse(readFileSync(join(fixtureDir, file), "utf8"));
      upstream.enqueue(fakeReply.json(body));
      const result = await adapter.generate(createTestCall({ provider: { baseUrl: upstream.baseUrl } }));
      const message = body.choices[0].message;
      const text = result.content.flatMap((part) => (part.type === "text" ? [part.text] : [])).join("");
      assert.equal(text, message.content ?? "");
      assert.deepEqual(
        result.content.flatMap((part) =>
          part.type === "tool-call" ? [[part.id, part.name, part.arguments]] : [],
        ),
        (message.tool_calls ?? []).map(
          (call: { id: string; function: { name: string; arguments: string } }) => [
            call.id,
            call.function.name,
            call.function.arguments,
          ],
        ),
      );
      assert.equal(result.usage.inputTokens, body.usage.prompt_tokens);
      assert.equal(result.usage.outputTokens, body.usage.completion_tokens);
      assert.equal(result.usage.cachedInputTokens, body.usage.prompt_tokens_details?.cached_tokens ?? 0);
      assert.equal(result.usage.cacheWriteTokens, body.usage.prompt_tokens_details?.cache_write_tokens ?? 0);
      assert.equal(result.usage.reasoningTokens, body.usage.completion_tokens_details?.reasoning_tokens ?? 0);
      assert.equal(result.upstreamModel, body.model);
    });
  }
});

test("recorded HTTP 400 bodies classify as invalid_request with the upstream param", async (t) => {
  for (const file of fixtureFiles.filter((name) => /^error-400-.*\.response\.json$/.test(name))) {
    await t.test(file, async () => {
      const body = JSON.parse(readFileSync(join(fixtureDir, file), "utf8"));
      upstream.enqueue(fakeReply.error(400, body));
      await assert.rejects(adapter.generate(createTestCall({ provider: { baseUrl: upstream.baseUrl } })), {
        code: "invalid_request",
        param: body.error.param,
        message: body.error.message,
      });
    });
  }
});

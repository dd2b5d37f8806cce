/**
 * Replays every recorded OpenAI Responses exchange in `test/fixtures/recorded/openai/responses/`
 * through the fake upstream and the adapter. Expected values are computed from the recordings with
 * a plain line split and JSON.parse, independent of the adapter's SSE reader and parsers.
 *
 * `.chunks.txt` files hold one event payload per line without SSE framing; they are re-framed as
 * OpenAI frames them (`event: <type>` + `data:`), and split at each `response.created`, since one
 * of them holds four responses of an agent loop back to back.
 */
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { createTestCall } from "../../../test/helpers/adapter-inputs.js";
import {
  type FakeOpenAiUpstream,
  fakeReply,
  startFakeOpenAiResponsesUpstream,
} from "../../../test/helpers/fake-openai-responses-upstream.js";
import { recordedPath } from "../../../test/helpers/fixture-paths.js";
import type { CanonicalStreamPart } from "../../canonical/index.js";
import { classifyUpstreamError } from "../shared/classify-upstream-error.js";
import { createUpstreamHttpClient } from "../shared/http-client.js";
import { createOpenAiResponsesAdapter } from "./adapter.js";

const fixtureDir = recordedPath("openai", "responses");
const fixtureFiles = readdirSync(fixtureDir).sort();

/** HTTP status of error bodies the manifest has no `http` entry for. */
const STATUS_OF_UNLISTED_ERROR_BODIES: Record<string, number> = { "openai-error.1.json": 429 };

let upstream: FakeOpenAiUpstream;
const httpClient = createUpstreamHttpClient();
const adapter = createOpenAiResponsesAdapter({ httpClient });

before(async () => {
  upstream = await startFakeOpenAiResponsesUpstream();
});

after(async () => {
  await httpClient.destroy();
  await upstream.close();
});

// biome-ignore lint/suspicious/noExplicitAny: recorded wire JSON is read field by field.
type Json = any;

interface Expected {
  text: string;
  toolCalls: Array<[string, string, string]>;
  /** Summary text and final encrypted content of each reasoning item, in output order. */
  reasoning: Array<{ text: string; encryptedContent?: string }>;
  terminal?: Json;
}

/**
 * The final items are those of the terminal event, each replaced by its `output_item.done`
 * version when there is one: the encrypted content of a reasoning item differs between the two
 * [observed], and the adapter keeps the one of the done item.
 */
function computeExpectedFromEvents(events: Json[]): Expected {
  const doneItems = new Map<string, Json>();
  let terminal: Json;
  for (const event of events) {
    if (event.type === "response.output_item.done") doneItems.set(event.item.id, event.item);
    if (event.type === "response.completed" || event.type === "response.incomplete")
      terminal = event.response;
  }
  const output = (terminal?.output ?? []).map((item: Json) => doneItems.get(item.id) ?? item);
  return { ...computeExpectedFromOutput(output), terminal };
}

function computeExpectedFromOutput(output: Json[]): Expected {
  const expected: Expected = { text: "", toolCalls: [], reasoning: [] };
  for (const item of output) {
    if (item.type === "message") {
      for (const part of item.content) expected.text += part.text ?? part.refusal ?? "";
    }
    if (item.type === "function_call") expected.toolCalls.push([item.call_id, item.name, item.arguments]);
    if (item.type === "reasoning") {
      const text = (item.summary ?? []).map((part: Json) => part.text).join("\n\n");
      if (text !== "" || item.encrypted_content) {
        expected.reasoning.push({
          text,
          ...(item.encrypted_content ? { encryptedContent: item.encrypted_content } : {}),
        });
      }
    }
  }
  return expected;
}

function splitResponses(events: Json[]): Json[][] {
  const responses: Json[][] = [];
  for (const event of events) {
    if (event.type === "response.created" || responses.length === 0) responses.push([]);
    responses.at(-1)!.push(event);
  }
  return responses;
}

function frame(events: Json[]): string {
  return events.map((event) => `event: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`).join("");
}

function readJsonLines(file: string): Json[] {
  return readFileSync(join(fixtureDir, file), "utf8")
    .split("\n")
    .filter((line) => line.trim() !== "")
    .map((line) => JSON.parse(line));
}

function readSseEventsPlainly(file: string): Json[] {
  return readFileSync(join(fixtureDir, file), "utf8")
    .split(/\r?\n/)
    .filter((line) => line.startsWith("data:"))
    .map((line) => JSON.parse(line.slice(5)));
}

async function streamParts(): Promise<CanonicalStreamPart[]> {
  const parts: CanonicalStreamPart[] = [];
  for await (const part of adapter.stream(createTestCall({ provider: { baseUrl: upstream.baseUrl } }))) {
    parts.push(part);
  }
  return parts;
}

function assertStreamReplay(parts: CanonicalStreamPart[], expected: Expected, name: string): void {
  assert.ok(!parts.some((part) => part.type === "error"), `${name}: no error part`);
  assert.equal(parts[0]?.type, "response-metadata", `${name}: metadata first`);
  assert.equal(
    parts.map((part) => (part.type === "text-delta" ? part.delta : "")).join(""),
    expected.text,
    `${name}: text reassembles`,
  );
  const calls = parts.flatMap((part) => (part.type === "tool-call" ? [part] : []));
  assert.deepEqual(
    calls.map((call) => [call.id, call.name, call.arguments]),
    expected.toolCalls,
    `${name}: tool calls`,
  );
  for (const call of calls) {
    assert.doesNotThrow(() => JSON.parse(call.arguments), `${name}: arguments are JSON`);
    const deltas = parts.map((part) =>
      part.type === "tool-input-delta" && part.id === call.id ? part.delta : "",
    );
    assert.equal(deltas.join(""), call.arguments, `${name}: deltas reassemble to the call`);
  }
  const reasoningTexts = new Map<string, string>();
  const reasoning: Expected["reasoning"] = [];
  for (const part of parts) {
    if (part.type === "reasoning-delta")
      reasoningTexts.set(part.id, (reasoningTexts.get(part.id) ?? "") + part.delta);
    if (part.type === "reasoning-end") {
      const encryptedContent = part.providerState?.encryptedContent;
      reasoning.push({
        text: reasoningTexts.get(part.id) ?? "",
        ...(encryptedContent ? { encryptedContent } : {}),
      });
    }
  }
  assert.deepEqual(reasoning, expected.reasoning, `${name}: reasoning text and encrypted content captured`);
  const finish = parts.at(-1);
  assert.equal(finish?.type, "finish", `${name}: finish part last`);
  if (finish?.type === "finish") {
    const expectedReason = expected.toolCalls.length > 0 ? "tool-calls" : "stop";
    assert.equal(finish.reason, expected.terminal?.status === "incomplete" ? "length" : expectedReason);
  }
  const usage = parts.findLast((part) => part.type === "usage");
  assert.equal(
    usage?.type === "usage" ? usage.usage.outputTokens : undefined,
    expected.terminal?.usage?.output_tokens,
  );
}

test("recorded .sse streams replay through the adapter", async (t) => {
  const files = fixtureFiles.filter((file) => file.endsWith(".sse"));
  assert.ok(files.includes("stream-reasoning-encrypted-function-call.response.sse"));
  for (const file of files) {
    await t.test(file, async () => {
      const body = readFileSync(join(fixtureDir, file));
      // Odd-sized pieces split frames, JSON and multi-byte characters at arbitrary points.
      upstream.enqueue(fakeReply.raw(body, { chunkSize: 61 }));
      assertStreamReplay(await streamParts(), computeExpectedFromEvents(readSseEventsPlainly(file)), file);
    });
  }
});

test("recorded .chunks.txt payloads (re-framed, one response at a time) replay through the adapter", async (t) => {
  const files = fixtureFiles.filter(
    (file) => file.endsWith(".chunks.txt") && !file.startsWith("openai-error"),
  );
  assert.ok(files.includes("openai-reasoning-encrypted-content.1.chunks.txt"));
  for (const file of files) {
    const responses = splitResponses(readJsonLines(file));
    for (const [position, events] of responses.entries()) {
      await t.test(`${file} #${position + 1}/${responses.length}`, async () => {
        upstream.enqueue(fakeReply.raw(frame(events), { chunkSize: 97 }));
        assertStreamReplay(await streamParts(), computeExpectedFromEvents(events), file);
      });
    }
  }
  const loop = splitResponses(readJsonLines("openai-reasoning-encrypted-content.1.chunks.txt"));
  assert.equal(loop.length, 4);
});

test("the recorded mid-stream failure is thrown like the same failure over HTTP", async () => {
  const events = readJsonLines("openai-error.1.chunks.txt");
  upstream.enqueue(fakeReply.raw(frame(events), { chunkSize: 50 }));
  const httpBody = readFileSync(join(fixtureDir, "openai-error.1.json"), "utf8");
  const overHttp = classifyUpstreamError({
    status: STATUS_OF_UNLISTED_ERROR_BODIES["openai-error.1.json"],
    bodyText: httpBody,
  });
  const seen: CanonicalStreamPart[] = [];
  await assert.rejects(
    async () => {
      for (const part of await streamParts()) seen.push(part);
    },
    { code: overHttp.code },
  );
  assert.deepEqual(seen, []);
});

test("recorded JSON bodies: responses parse through generate, error bodies classify", async (t) => {
  const manifest = JSON.parse(readFileSync(recordedPath("manifest.json"), "utf8"));
  const statusOf = (file: string): number =>
    manifest.files.find((entry: Json) => entry.file === `openai/responses/${file}`)?.http?.status ??
    STATUS_OF_UNLISTED_ERROR_BODIES[file];
  const files = fixtureFiles.filter((file) => file.endsWith(".json") && !file.endsWith(".request.json"));
  assert.ok(files.length >= 10);
  for (const file of files) {
    await t.test(file, async () => {
      const body = JSON.parse(readFileSync(join(fixtureDir, file), "utf8"));
      const call = createTestCall({ provider: { baseUrl: upstream.baseUrl } });
      if (body.object !== "response") {
        const status = statusOf(file);
        assert.ok(status >= 400, `${file}: error status known`);
        upstream.enqueue(fakeReply.error(status, body));
        const expected =
          status === 400
            ? { code: "invalid_request", message: body.error.message, param: body.error.param }
            : { code: classifyUpstreamError({ status, bodyText: JSON.stringify(body) }).code };
        await assert.rejects(adapter.generate(call), expected);
        return;
      }
      upstream.enqueue(fakeReply.json(body));
      const result = await adapter.generate(call);
      const expected = computeExpectedFromOutput(body.output);
      assert.equal(
        result.content.flatMap((part) => (part.type === "text" ? [part.text] : [])).join(""),
        expected.text,
      );
      const calls = result.content.flatMap((part) =>
        part.type === "tool-call" ? [[part.id, part.name, part.arguments]] : [],
      );
      assert.deepEqual(calls, expected.toolCalls);
      for (const [, , args] of calls) assert.doesNotThrow(() => JSON.parse(args));
      assert.deepEqual(
        result.content.flatMap((part) =>
          part.type === "reasoning"
            ? [
                {
                  text: part.text,
                  ...(part.providerState?.encryptedContent
                    ? { encryptedContent: part.providerState.encryptedContent }
                    : {}),
                },
              ]
            : [],
        ),
        expected.reasoning,
      );
      for (const part of result.content) {
        if (part.type === "reasoning" && part.providerState !== undefined) {
          assert.equal(part.providerState.itemId?.startsWith("rs_"), true);
          assert.equal(part.providerState.upstreamModel, call.upstreamModel);
        }
      }
      assert.equal(result.finishReason, expected.toolCalls.length > 0 ? "tool-calls" : "stop");
      assert.equal(result.usage.inputTokens, body.usage.input_tokens);
      assert.equal(result.usage.outputTokens, body.usage.output_tokens);
      assert.equal(result.usage.cachedInputTokens, body.usage.input_tokens_details?.cached_tokens ?? 0);
      assert.equal(result.usage.cacheWriteTokens, body.usage.input_tokens_details?.cache_write_tokens ?? 0);
      assert.equal(result.usage.reasoningTokens, body.usage.output_tokens_details?.reasoning_tokens ?? 0);
      assert.equal(result.upstreamModel, body.model);
    });
  }
});

/**
 * The lighter sub-matrix with the Vercel AI SDK as the client: its OpenAI provider in Responses mode
 * (`openai(model)`) and chat mode (`openai.chat(model)`), its OpenAI-compatible provider (what
 * opencode and most third-party tools use), and its Anthropic provider, each parsing
 * our bodies and streams with its own schemas — × every provider kind × text and tool call ×
 * `generateText` / `streamText`. Usage must come out the same through all four: the AI SDK
 * normalises each wire's convention (Anthropic's uncached `input_tokens` included) back to totals.
 */
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { createAnthropic } from "@ai-sdk/anthropic";
import { createOpenAI } from "@ai-sdk/openai";
import { createOpenAICompatible } from "@ai-sdk/openai-compatible";
import { generateText, jsonSchema, type LanguageModel, streamText, tool } from "ai";
import type { ProviderKind } from "../../src/catalog/types.js";
import {
  type ConformanceGateway,
  PROVIDER_KINDS,
  startConformanceGateway,
} from "../helpers/conformance-gateway.js";
import {
  SCENARIO_ANSWERS,
  scriptAnswer,
  upstreamToolCallId,
  WEATHER_TOOL,
} from "../helpers/scenario-scripts.js";

type ClientId =
  | "ai-sdk openai (responses)"
  | "ai-sdk openai.chat"
  | "ai-sdk openai-compatible"
  | "ai-sdk anthropic";
const CLIENTS: readonly ClientId[] = [
  "ai-sdk openai (responses)",
  "ai-sdk openai.chat",
  "ai-sdk openai-compatible",
  "ai-sdk anthropic",
];
const SCENARIOS = ["text", "tool-call"] as const;
const CALLS = ["generateText", "streamText"] as const;

/** Cells failing because of a known gateway bug: cell name → what is wrong, where. */
const TODO: Record<string, string> = {};

let gateway: ConformanceGateway;
let models: Record<ClientId, (slug: string) => LanguageModel>;

before(async () => {
  gateway = await startConformanceGateway();
  const openai = createOpenAI({ apiKey: gateway.apiKey, baseURL: `${gateway.url}/api/v1` });
  // The AI SDK's Anthropic provider takes the base URL with /v1 (it appends /messages).
  const anthropic = createAnthropic({ apiKey: gateway.apiKey, baseURL: `${gateway.url}/api/v1` });
  // As opencode configures it: a name, the base URL and the key; usage in streams asked for.
  const compatible = createOpenAICompatible({
    name: "hi-gateway",
    apiKey: gateway.apiKey,
    baseURL: `${gateway.url}/api/v1`,
    includeUsage: true,
  });
  models = {
    "ai-sdk openai (responses)": (slug) => openai(slug),
    "ai-sdk openai.chat": (slug) => openai.chat(slug),
    "ai-sdk openai-compatible": (slug) => compatible(slug),
    "ai-sdk anthropic": (slug) => anthropic(slug),
  };
});

after(async () => {
  await gateway?.close();
});

const weatherTool = tool({
  description: WEATHER_TOOL.description,
  inputSchema: jsonSchema<{ city: string; unit?: string }>(WEATHER_TOOL.parameters as never),
});

for (const client of CLIENTS) {
  for (const kind of PROVIDER_KINDS) {
    for (const scenario of SCENARIOS) {
      for (const call of CALLS) {
        const name = `${client} × ${kind} × ${scenario} × ${call}`;
        test(name, TODO[name] === undefined ? {} : { todo: TODO[name] }, async () => {
          await runCell(client, kind, scenario, call);
        });
      }
    }
  }
}

test("ai-sdk: every todo entry names a cell", () => {
  const names = new Set(
    CLIENTS.flatMap((client) =>
      PROVIDER_KINDS.flatMap((kind) =>
        SCENARIOS.flatMap((scenario) => CALLS.map((call) => `${client} × ${kind} × ${scenario} × ${call}`)),
      ),
    ),
  );
  assert.deepEqual(
    Object.keys(TODO).filter((name) => !names.has(name)),
    [],
  );
});

async function runCell(
  client: ClientId,
  kind: ProviderKind,
  scenario: (typeof SCENARIOS)[number],
  call: (typeof CALLS)[number],
): Promise<void> {
  const upstream = gateway.upstreams[kind];
  const mark = upstream.requests.length;
  const stream = call === "streamText";
  upstream.serve(scriptAnswer(kind, scenario, { stream }));
  const options = {
    model: models[client](upstream.model),
    prompt: scenario === "text" ? "Say hello" : "What is the weather in Paris?",
    ...(scenario === "tool-call" ? { tools: { [WEATHER_TOOL.name]: weatherTool } } : {}),
    maxRetries: 0,
  };

  let result: {
    text: string;
    finishReason: string;
    toolCalls: Array<{ toolCallId: string; toolName: string; input: unknown }>;
    usage: { inputTokens?: number; outputTokens?: number; inputTokenDetails: { cacheReadTokens?: number } };
  };
  if (stream) {
    const streamed = streamText(options);
    const errors: unknown[] = [];
    for await (const part of streamed.fullStream) if (part.type === "error") errors.push(part.error);
    assert.deepEqual(errors, [], "no error parts in the stream");
    result = {
      text: await streamed.text,
      finishReason: await streamed.finishReason,
      toolCalls: await streamed.toolCalls,
      usage: await streamed.usage,
    };
  } else {
    result = await generateText(options);
  }

  assert.equal(upstream.requests.length - mark, 1, "one upstream call");
  const answer = SCENARIO_ANSWERS[scenario];
  if (scenario === "text") {
    assert.equal(result.text, SCENARIO_ANSWERS.text.text.join(""));
    assert.equal(result.finishReason, "stop");
    assert.deepEqual(result.toolCalls, []);
  } else {
    assert.equal(result.text, "");
    assert.equal(result.finishReason, "tool-calls");
    const [expected] = SCENARIO_ANSWERS["tool-call"].toolCalls;
    assert.equal(result.toolCalls.length, 1);
    const [toolCall] = result.toolCalls;
    assert.equal(toolCall.toolName, expected.name);
    assert.deepEqual(toolCall.input, JSON.parse(expected.arguments));
    const upstreamId = upstreamToolCallId(kind, 0);
    if (upstreamId === undefined) assert.match(toolCall.toolCallId, /^call_[A-Za-z0-9]{24}$/);
    else assert.equal(toolCall.toolCallId, upstreamId);
  }
  assert.equal(result.usage.inputTokens, answer.usage.input, "input tokens (cached included)");
  assert.equal(result.usage.inputTokenDetails.cacheReadTokens, answer.usage.cached);
  assert.equal(result.usage.outputTokens, answer.usage.output);
}

/**
 * The Vercel AI SDK's Responses provider at its default settings (`openai(model)`, no
 * `store: false`) replays earlier reasoning and message items as `item_reference`s. A two-step tool
 * loop with `execute` works on a reasoning model of every provider kind: the references resolve
 * from the ids the gateway sealed the items into, and the upstream gets the reasoning state back
 * byte-identical. References the gateway cannot resolve are a clear 400 naming the field.
 */
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { createOpenAI } from "@ai-sdk/openai";
import { generateText, jsonSchema, stepCountIs, streamText, tool } from "ai";
import OpenAI from "openai";
import type { ProviderKind } from "../../src/catalog/types.js";
import { type ConformanceGateway, startConformanceGateway } from "../helpers/conformance-gateway.js";
import {
  REASONING_STATE,
  renderAnswer,
  SCENARIO_ANSWERS,
  scriptAnswer,
  WEATHER_TOOL,
} from "../helpers/scenario-scripts.js";

const KINDS: readonly ProviderKind[] = ["openai-responses", "anthropic", "google", "openai-compatible"];

let gateway: ConformanceGateway;
/** The bodies the AI SDK sent to the gateway, in order. */
const sent: Array<{ input: Array<Record<string, unknown>> }> = [];
let provider: ReturnType<typeof createOpenAI>;

before(async () => {
  gateway = await startConformanceGateway();
  provider = createOpenAI({
    apiKey: gateway.apiKey,
    baseURL: `${gateway.url}/api/v1`,
    fetch: async (url, init) => {
      if (typeof init?.body === "string") sent.push(JSON.parse(init.body));
      return fetch(url, init);
    },
  });
});

after(async () => {
  await gateway?.close();
});

const weather = tool({
  description: WEATHER_TOOL.description,
  inputSchema: jsonSchema<{ city: string; unit?: string }>(WEATHER_TOOL.parameters as never),
  execute: async () => "sunny, 24°C",
});

/** What the upstream must get back in step 2: the reasoning state of step 1, byte-identical. */
function assertStateReplayed(kind: ProviderKind, body: Record<string, unknown>, withText: boolean): void {
  const reasoning = SCENARIO_ANSWERS.reasoning.reasoning.join("");
  const json = JSON.stringify(body);
  switch (kind) {
    case "openai-responses": {
      const items = body.input as Array<Record<string, unknown>>;
      const item = items.find((entry) => entry.type === "reasoning");
      assert.equal(item?.encrypted_content, REASONING_STATE["openai-responses"]);
      break;
    }
    case "anthropic": {
      const turns = body.messages as Array<{ role: string; content: Array<Record<string, unknown>> }>;
      const block = turns.find((turn) => turn.role === "assistant")?.content[0];
      assert.deepEqual(block, {
        type: "thinking",
        thinking: reasoning,
        signature: REASONING_STATE.anthropic,
      });
      break;
    }
    case "google": {
      const turns = body.contents as Array<{ role: string; parts: Array<Record<string, unknown>> }>;
      const call = turns.find((turn) => turn.role === "model")?.parts.find((part) => "functionCall" in part);
      assert.equal(call?.thoughtSignature, REASONING_STATE.google);
      break;
    }
    default: {
      // Chat Completions upstreams carry no opaque state: the reasoning text goes back as it was.
      const turns = body.messages as Array<Record<string, unknown>>;
      assert.equal(turns.find((turn) => turn.role === "assistant")?.reasoning, reasoning);
    }
  }
  if (withText) assert.ok(json.includes('"Let me check."'), "the step-1 text went back too");
}

for (const kind of KINDS) {
  test(`generateText tool loop at default settings × ${kind}: references resolve, state byte-identical`, async () => {
    const upstream = gateway.upstreams[kind];
    const mark = upstream.requests.length;
    upstream.serve(
      scriptAnswer(kind, "reasoning", { stream: false }),
      scriptAnswer(kind, "reasoning", { stream: false, turn: 2 }),
    );
    const first = sent.length;
    const result = await generateText({
      model: provider(upstream.model),
      prompt: "What is the weather in Paris?",
      tools: { [WEATHER_TOOL.name]: weather },
      stopWhen: stepCountIs(2),
      maxRetries: 0,
    });
    assert.equal(result.steps.length, 2);
    assert.equal(result.text, SCENARIO_ANSWERS.reasoningFollowUp.text.join(""));
    // The SDK did send references (reasoning, the step-1 message and, for Gemini, the carrier of
    // the call's signature), not the items.
    const references = sent[first + 1]!.input.filter((item) => item.type === "item_reference");
    assert.deepEqual(
      references.map((item) => String(item.id).slice(0, 3)),
      kind === "google" ? ["rs_", "msg", "rs_"] : ["rs_", "msg"],
    );
    assert.equal(upstream.requests.length - mark, 2);
    assertStateReplayed(kind, upstream.requests.at(-1)!.body, true);
  });

  test(`streamText tool loop at default settings × ${kind}: the held reasoning item resolves`, async () => {
    const upstream = gateway.upstreams[kind];
    const { text: _text, ...withoutText } = SCENARIO_ANSWERS.reasoning;
    upstream.serve(
      renderAnswer(kind, withoutText, { stream: true }),
      scriptAnswer(kind, "reasoning", { stream: true, turn: 2 }),
    );
    const first = sent.length;
    const result = streamText({
      model: provider(upstream.model),
      prompt: "What is the weather in Paris?",
      tools: { [WEATHER_TOOL.name]: weather },
      stopWhen: stepCountIs(2),
      maxRetries: 0,
    });
    const errors: unknown[] = [];
    for await (const part of result.fullStream) if (part.type === "error") errors.push(part.error);
    assert.deepEqual(errors, []);
    assert.equal(await result.text, SCENARIO_ANSWERS.reasoningFollowUp.text.join(""));
    assert.ok(sent[first + 1]!.input.some((item) => item.type === "item_reference"));
    assertStateReplayed(kind, upstream.requests.at(-1)!.body, false);
  });
}

test("references the gateway did not seal are a 400 naming input[i].id; nothing reaches the upstream", async () => {
  const upstream = gateway.upstreams.anthropic;
  upstream.serve(scriptAnswer("anthropic", "reasoning", { stream: false }));
  const response = await gateway.openai.responses.create({ model: upstream.model, input: "Weather?" });
  const reasoning = response.output.find((item) => item.type === "reasoning")!;
  const [plainId, payload, tag] = reasoning.id.split(".");
  const mark = upstream.requests.length;
  const cases: Array<[string, RegExp]> = [
    ["rs_0123456789abcdef", /not an item this gateway produced/],
    [plainId!, /whose id does not carry it/],
    [`${plainId}.${payload}.${"A".repeat(tag!.length)}`, /not sealed by this gateway/],
    [`${plainId}.${payload!.slice(0, -4)}AAAA.${tag}`, /not sealed by this gateway/],
  ];
  for (const [id, message] of cases) {
    await assert.rejects(
      gateway.openai.responses.create({
        model: upstream.model,
        input: [
          { role: "user", content: "Weather?" },
          { type: "item_reference", id },
        ],
      }),
      (error: unknown) =>
        error instanceof OpenAI.BadRequestError &&
        (error.error as { param: string }).param === "input[1].id" &&
        message.test(error.message),
    );
  }
  assert.equal(upstream.requests.length, mark, "refused before any upstream call");
});

/**
 * What server tools cost, on a real gateway in both runtime modes: a run is billed every round's
 * tokens plus each successful call's price, the same streamed and not; the response (chat
 * `usage.cost`), the generation record (`total_cost`, `tool_costs_micro_usd`), the key's spend and
 * the workspace balance all agree on it; a failed search costs nothing. And the spend limits hold
 * inside the loop: a key whose daily limit pays for the first round but not for the next gets an
 * answer cut short (finish `length`, `max_tokens`, incomplete) without the round or the search,
 * and settles within the limit; a limit that covers the round lets it run.
 */
import assert from "node:assert/strict";
import type { TestContext } from "node:test";
import type Anthropic from "@anthropic-ai/sdk";
import type OpenAI from "openai";
import { DEFAULT_HITS, searchReply } from "../helpers/fake-search-backend.js";
import { assertLedgerMatches } from "../helpers/money-checks.js";
import { answer, callTools, usage } from "../helpers/scripted-tool-model.js";
import {
  type Account,
  COMPLETION_MICRO_USD,
  forEachToolsGatewayMode,
  PROMPT_MICRO_USD,
  SEARCH_PRICE_MICRO_USD,
  type ServerToolsGateway,
} from "../helpers/server-tools-gateway.js";

// biome-ignore lint/suspicious/noExplicitAny: wire JSON is read field by field.
type Json = any;

const ROUND_1 = usage(100, 20);
const ROUND_2 = usage(300, 50);
const roundCost = (round: { input: number; output: number }) =>
  round.input * PROMPT_MICRO_USD + round.output * COMPLETION_MICRO_USD;
/** 360 + 1,000 µUSD of tokens. */
const TOKENS_MICRO_USD = roundCost(ROUND_1) + roundCost(ROUND_2);

const SEARCH = { name: "web_search", input: { query: "capital of France" } };
const SEARCH_ANSWER = ["Paris ", `([Paris - Wikipedia](${DEFAULT_HITS[0].url}))`, "."];
const PROMPT = "What is the capital of France? Cite a source.";

async function keySpend(context: ServerToolsGateway, apiKey: string): Promise<Json> {
  const response = await fetch(`${context.url}/api/v1/key`, {
    headers: { authorization: `Bearer ${apiKey}` },
  });
  assert.equal(response.status, 200);
  return ((await response.json()) as Json).data;
}

async function chatSearch(account: Account, stream: boolean): Promise<{ id: string; cost: number }> {
  const params = {
    model: "tools/openai-compatible",
    messages: [{ role: "user" as const, content: PROMPT }],
    plugins: [{ id: "web_search" }],
  };
  if (!stream) {
    const completion = await account.openai.chat.completions.create(
      params as OpenAI.ChatCompletionCreateParamsNonStreaming,
    );
    assert.equal(completion.choices[0].message.content, SEARCH_ANSWER.join(""));
    return { id: completion.id, cost: (completion.usage as Json).cost };
  }
  const chunks = await account.openai.chat.completions.create({
    ...(params as unknown as OpenAI.ChatCompletionCreateParamsStreaming),
    stream: true,
  });
  let id = "";
  let cost: number | undefined;
  for await (const chunk of chunks) {
    id = chunk.id;
    if (chunk.usage) cost = (chunk.usage as Json).cost;
  }
  assert.ok(cost !== undefined, "the usage chunk carries the cost");
  return { id, cost };
}

async function costsRoundsPlusTools(context: ServerToolsGateway): Promise<void> {
  const account = await context.createAccount({ credits: "1" });
  const upstream = context.upstreams["openai-compatible"];
  const expected = TOKENS_MICRO_USD + SEARCH_PRICE_MICRO_USD;
  let billed = 0;

  for (const stream of [false, true]) {
    upstream.serve(
      callTools(upstream.kind, [SEARCH], { stream, usage: ROUND_1 }),
      answer(upstream.kind, SEARCH_ANSWER, { stream, usage: ROUND_2 }),
    );
    const { id, cost } = await chatSearch(account, stream);
    assert.equal(cost, expected / 1e6, `usage.cost includes the search (${stream ? "streamed" : "not"})`);
    const record = await context.lookupGeneration(id, account.apiKey);
    assert.equal(record.stream, stream);
    assert.equal(record.cost_micro_usd, String(expected));
    assert.equal(record.total_cost, expected / 1e6);
    assert.deepEqual(record.tool_costs_micro_usd, { web_search: String(SEARCH_PRICE_MICRO_USD) });
    billed += Number(record.cost_micro_usd);
  }

  // The same through Messages, with web_fetch (priced) activated too but not called.
  const anthropic = context.upstreams.anthropic;
  const messagesCosts: number[] = [];
  for (const stream of [false, true]) {
    anthropic.serve(
      callTools(anthropic.kind, [SEARCH], { stream, usage: ROUND_1 }),
      answer(anthropic.kind, SEARCH_ANSWER, { stream, usage: ROUND_2 }),
    );
    const params = {
      model: anthropic.model,
      max_tokens: 512,
      messages: [{ role: "user" as const, content: PROMPT }],
      tools: [
        { type: "web_search_20250305", name: "web_search" },
        { type: "web_fetch_20250910", name: "web_fetch" },
      ],
    } as unknown as Anthropic.MessageCreateParamsNonStreaming;
    const message = stream
      ? await account.anthropic.messages.stream(params as never).finalMessage()
      : await account.anthropic.messages.create(params);
    assert.deepEqual(message.usage.server_tool_use, { web_search_requests: 1, web_fetch_requests: 0 });
    const record = await context.lookupGeneration(message.id, account.apiKey);
    assert.equal(
      record.cost_micro_usd,
      String(expected),
      "an activated tool the model did not call costs nothing",
    );
    assert.deepEqual(record.tool_costs_micro_usd, { web_search: String(SEARCH_PRICE_MICRO_USD) });
    messagesCosts.push(Number(record.cost_micro_usd));
    billed += Number(record.cost_micro_usd);
  }
  assert.equal(messagesCosts[0], messagesCosts[1], "streamed and not cost the same");

  await assertLedgerMatches({
    gatewayUrl: context.url,
    apiKey: account.apiKey,
    initialBalanceMicroUsd: account.initialBalanceMicroUsd,
    billedMicroUsd: billed,
  });
  assert.equal(billed, 4 * expected);
}

async function failedSearchCostsNothing(context: ServerToolsGateway): Promise<void> {
  const account = await context.createAccount({ credits: "1" });
  const upstream = context.upstreams["openai-compatible"];
  context.search.enqueue(searchReply.status(500, { error: "search error" }));
  upstream.serve(
    callTools(upstream.kind, [SEARCH], { stream: true, usage: ROUND_1 }),
    answer(upstream.kind, ["I could not search, but it is Paris."], { stream: true, usage: ROUND_2 }),
  );
  const { id, cost } = await chatSearch(account, true);
  assert.equal(cost, TOKENS_MICRO_USD / 1e6);
  const record = await context.lookupGeneration(id, account.apiKey);
  assert.equal(record.cost_micro_usd, String(TOKENS_MICRO_USD));
  assert.deepEqual(record.tool_costs_micro_usd, {});
  await assertLedgerMatches({
    gatewayUrl: context.url,
    apiKey: account.apiKey,
    initialBalanceMicroUsd: account.initialBalanceMicroUsd,
    billedMicroUsd: TOKENS_MICRO_USD,
  });
}

/**
 * Reservations with `max_tokens` 256 on the openai-compatible route (one token per prompt byte):
 * round 1 holds about 5,000 µUSD (the ~1.5 KB prompt with the tool's definition, and the output
 * cap); the search round needs about 35,000 µUSD more (the search's price, the next prompt with up
 * to 12,200 tokens of results, the output cap). $0.02 a day pays for the first, not for the second;
 * $0.10 pays for both.
 */
const TIGHT_DAILY_USD = "0.02";
const ROOMY_DAILY_USD = "0.10";
const MAX_TOKENS = 256;

interface CutShort {
  id: string;
  /** The format's way of saying the answer was cut. */
  finish: string;
}

const HEADROOM_FORMATS: Array<{
  format: string;
  stream: boolean;
  send(account: Account, model: string): Promise<CutShort>;
  cut: string;
  full: string;
}> = [
  {
    format: "chat",
    stream: true,
    cut: "length",
    full: "stop",
    async send(account, model) {
      const completion = await account.openai.chat.completions
        .stream({
          model,
          max_tokens: MAX_TOKENS,
          messages: [{ role: "user", content: PROMPT }],
          plugins: [{ id: "web_search" }],
        } as unknown as OpenAI.ChatCompletionCreateParamsStreaming)
        .finalChatCompletion();
      return { id: completion.id, finish: completion.choices[0].finish_reason };
    },
  },
  {
    format: "responses",
    stream: false,
    cut: "incomplete:max_output_tokens",
    full: "completed",
    async send(account, model) {
      const response = await account.openai.responses.create({
        model,
        store: false,
        max_output_tokens: MAX_TOKENS,
        input: PROMPT,
        tools: [{ type: "web_search" }],
      } as unknown as OpenAI.Responses.ResponseCreateParamsNonStreaming);
      const item = (response.output as Json[]).find((entry) => entry.type === "web_search_call");
      if (response.status === "incomplete") assert.equal(item?.status, "failed", "the unpaid search failed");
      return {
        id: response.id,
        finish:
          response.status === "incomplete"
            ? `incomplete:${response.incomplete_details?.reason}`
            : (response.status ?? ""),
      };
    },
  },
  {
    format: "messages",
    stream: true,
    cut: "max_tokens",
    full: "end_turn",
    async send(account, model) {
      const message = await account.anthropic.messages
        .stream({
          model,
          max_tokens: MAX_TOKENS,
          messages: [{ role: "user", content: PROMPT }],
          tools: [{ type: "web_search_20250305", name: "web_search" }],
        } as never)
        .finalMessage();
      const result = (message.content as Json[]).find((block) => block.type === "web_search_tool_result");
      if (message.stop_reason === "max_tokens") {
        assert.deepEqual(result?.content, {
          type: "web_search_tool_result_error",
          error_code: "unavailable",
        });
      }
      return { id: message.id, finish: message.stop_reason ?? "" };
    },
  },
];

async function limitCutsTheLoopShort(context: ServerToolsGateway, t: TestContext): Promise<void> {
  const upstream = context.upstreams["openai-compatible"];
  for (const entry of HEADROOM_FORMATS) {
    await t.test(`${entry.format}, ${entry.stream ? "streamed" : "not streamed"}`, async () => {
      // Tight: round 1 runs, the search round is not affordable.
      const tight = await context.createAccount({ dailyLimitUsd: TIGHT_DAILY_USD });
      const searchesBefore = context.search.requests.length;
      upstream.serve(
        callTools(upstream.kind, [SEARCH], { stream: entry.stream, usage: ROUND_1 }),
        answer(upstream.kind, SEARCH_ANSWER, { stream: entry.stream, usage: ROUND_2 }),
      );
      const cut = await entry.send(tight, upstream.model);
      assert.equal(cut.finish, entry.cut);
      assert.equal(upstream.calls.length, 1, "the unaffordable round is not sent");
      assert.equal(context.search.requests.length, searchesBefore, "nor is the search run");
      const record = await context.lookupGeneration(cut.id, tight.apiKey);
      assert.equal(record.cost_micro_usd, String(roundCost(ROUND_1)), "billed the first round only");
      assert.equal(record.finish_reason, "length");
      const spend = await keySpend(context, tight.apiKey);
      const daily = spend.limits.daily;
      assert.equal(daily.spent_micro_usd, String(roundCost(ROUND_1)));
      assert.ok(Number(daily.spent_micro_usd) <= Number(daily.limit_micro_usd), "settled within the limit");
      assert.equal(daily.reserved_micro_usd, "0", "nothing left reserved");

      // Roomy: the same run goes through, search and all.
      const roomy = await context.createAccount({ dailyLimitUsd: ROOMY_DAILY_USD });
      upstream.serve(
        callTools(upstream.kind, [SEARCH], { stream: entry.stream, usage: ROUND_1 }),
        answer(upstream.kind, SEARCH_ANSWER, { stream: entry.stream, usage: ROUND_2 }),
      );
      const full = await entry.send(roomy, upstream.model);
      assert.equal(full.finish, entry.full);
      assert.equal(upstream.calls.length, 2);
      const roomyRecord = await context.lookupGeneration(full.id, roomy.apiKey);
      assert.equal(roomyRecord.cost_micro_usd, String(TOKENS_MICRO_USD + SEARCH_PRICE_MICRO_USD));
      const roomySpend = (await keySpend(context, roomy.apiKey)).limits.daily;
      assert.equal(roomySpend.spent_micro_usd, roomyRecord.cost_micro_usd);
      assert.equal(roomySpend.reserved_micro_usd, "0");
    });
  }
}

// One gateway per mode; every check has its own workspace and key, so the ledgers stay apart.
forEachToolsGatewayMode("server-tool money", {}, async (context, t) => {
  await t.test("a run costs its rounds plus its tools, the same streamed and not", () =>
    costsRoundsPlusTools(context),
  );
  await t.test("a failed search costs nothing; the rounds are still billed", () =>
    failedSearchCostsNothing(context),
  );
  await t.test(
    "a key whose daily limit cannot pay for the next round gets its answer cut short, within the limit",
    (tt) => limitCutsTheLoopShort(context, tt),
  );
});

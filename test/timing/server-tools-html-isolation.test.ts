/**
 * web_fetch's HTML conversion is isolated between keys, through a real gateway: one key's model
 * fetches three hostile pages at once (200,000 nested `<div>`, 8 MB of paragraphs, 2 MB of deep
 * chains, served on loopback), and another key's fetch of a small page meanwhile takes about as
 * long as it does alone. The hostile conversions that run past their deadline are stopped (their
 * worker terminated and replaced), the model is told so, and each of those fetches still costs the
 * web_fetch price; the pool serves on afterwards.
 *
 * The pool has two workers here (at least two by default): the hostile key holds at most one. The
 * conversion deadline is short and the size bounds are raised, so the hostile pages run into the
 * deadline on any machine.
 */
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import type OpenAI from "openai";
import type { UpstreamRequest } from "../helpers/conformance-gateway.js";
import { type Canary, createTripwireNetwork, startCanary } from "../helpers/fetch-tripwire.js";
import { answer, callTools, usage } from "../helpers/scripted-tool-model.js";
import {
  type Account,
  COMPLETION_MICRO_USD,
  FETCH_PRICE_MICRO_USD,
  PROMPT_MICRO_USD,
  type ServerToolsGateway,
  startServerToolsGateway,
} from "../helpers/server-tools-gateway.js";

// biome-ignore lint/suspicious/noExplicitAny: wire JSON is read field by field.
type Json = any;

const ROUND_1 = usage(100, 20);
const ROUND_2 = usage(300, 50);
const TOKENS_MICRO_USD =
  (ROUND_1.input + ROUND_2.input) * PROMPT_MICRO_USD +
  (ROUND_1.output + ROUND_2.output) * COMPLETION_MICRO_USD;
const CONVERSION_DEADLINE_MS = 1500;
/** How much later than alone the small page may come while the hostile pages convert. */
const MAX_DELAY_MS = 1000;

const SMALL_PAGE =
  "<!doctype html><html><head><title>Small page</title></head><body><article><h1>Small page</h1>" +
  "<p>The small page's only paragraph, which the other key's model reads.</p></article></body></html>";
const HOSTILE_PAGES: Record<string, string> = {
  "/nested": `<html><body>${"<div>".repeat(200_000)}Deep text.${"</div>".repeat(200_000)}</body></html>`,
  "/flat": `<html><body><article>${"<p>Paragraph with <a href='/x'>a link</a> and <b>bold</b> words in it.</p>".repeat(110_000)}</article></body></html>`,
  "/chains": `<html><body>${`${"<div>".repeat(120)}words ${"</div>".repeat(120)}`.repeat(1_800)}</body></html>`,
};

let pages: Canary;
let context: ServerToolsGateway;
let attacker: Account;
let victim: Account;
/** What the model was given as each fetch's result, by URL (the last one). */
const toolResults = new Map<string, string>();

before(async () => {
  pages = await startCanary();
  for (const [path, html] of Object.entries({ "/small": SMALL_PAGE, ...HOSTILE_PAGES })) {
    pages.route(path, (response) => response.writeHead(200, { "content-type": "text/html" }).end(html));
  }
  context = await startServerToolsGateway({
    webFetch: {
      unsafe_allow_loopback_for_tests: true,
      allowed_ports: [80, 443, pages.port],
      // The hostile pages wait their turn behind each other's deadline and worker restart.
      timeout_ms: 60_000,
      html_conversion: {
        workers: 2,
        timeout_ms: CONVERSION_DEADLINE_MS,
        max_bytes: 10 * 1024 * 1024,
        max_elements: 1_000_000,
      },
    },
    fetchNetwork: createTripwireNetwork({ loopbackPorts: [pages.port] }),
  });
  attacker = await context.createAccount();
  victim = await context.createAccount();
  // The model fetches the URL its user names, then answers with the first line of the result.
  context.upstreams["openai-compatible"].respond((request: UpstreamRequest) => {
    const messages: Json[] = request.body.messages;
    const url = /http:\/\/\S+/.exec(messages.find((message) => message.role === "user").content)![0];
    const result = messages.find((message) => message.role === "tool");
    if (result === undefined) {
      return callTools("openai-compatible", [{ name: "web_fetch", input: { url } }], {
        stream: false,
        usage: ROUND_1,
      });
    }
    toolResults.set(url, result.content);
    return answer("openai-compatible", ["Read it."], { stream: false, usage: ROUND_2 });
  });
});

after(async () => {
  await context?.close();
  await pages?.close();
});

async function fetchPage(account: Account, path: string): Promise<{ id: string; ms: number }> {
  const url = `http://127.0.0.1:${pages.port}${path}`;
  const started = performance.now();
  const completion = await account.openai.chat.completions.create(
    {
      model: "tools/openai-compatible",
      messages: [{ role: "user", content: `Read ${url}` }],
      plugins: [{ id: "web_fetch" }],
    } as OpenAI.ChatCompletionCreateParamsNonStreaming,
    { timeout: 120_000 },
  );
  const ms = performance.now() - started;
  assert.equal(completion.choices[0].message.content, "Read it.");
  return { id: completion.id, ms };
}

function resultOf(path: string): string {
  const result = toolResults.get(`http://127.0.0.1:${pages.port}${path}`);
  assert.ok(result !== undefined, `the model got a result for ${path}`);
  return result;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

test("three hostile pages of one key do not hold up another key's small page; stopped conversions are billed", async (t) => {
  // Warm: the pool starts its workers with the first page.
  await fetchPage(victim, "/small");
  const stats = () => context.gateway.htmlConversionStats()!;
  assert.equal(stats().workers, 2);
  const alone: number[] = [];
  for (let round = 0; round < 3; round++) alone.push((await fetchPage(victim, "/small")).ms);
  assert.match(resultOf("/small"), /The small page's only paragraph/);

  // The hostile key's three pages are fetched and handed to the pool at once.
  const submitted = stats().submitted;
  let hostileSettled = 0;
  const hostile = Object.keys(HOSTILE_PAGES).map((path) =>
    fetchPage(attacker, path).finally(() => {
      hostileSettled++;
    }),
  );
  // Settled as they end, so a failure below leaves no rejection unhandled.
  const hostileEnded = Promise.allSettled(hostile);
  // All three downloaded and handed to the pool: one converting, two waiting for the key's turn.
  for (const giveUp = Date.now() + 30_000; stats().submitted < submitted + 3; ) {
    assert.ok(Date.now() < giveUp, "the hostile pages reach the pool");
    await new Promise((resolve) => setTimeout(resolve, 5));
  }

  // The other key reads the small page three times while they convert; the median of its times
  // against the median alone (one of the three may meet a terminated worker's replacement starting).
  const during: number[] = [];
  for (let round = 0; round < 3; round++) {
    toolResults.delete(`http://127.0.0.1:${pages.port}/small`);
    during.push((await fetchPage(victim, "/small")).ms);
    assert.match(resultOf("/small"), /The small page's only paragraph/);
  }
  const timings = `alone ${alone.map(Math.round).join(", ")} ms; beside the hostile pages ${during.map(Math.round).join(", ")} ms`;
  t.diagnostic(`small page: ${timings}; hostile pages ended by then: ${hostileSettled}`);
  // The hostile key's pages take turns on one worker, each up to the deadline: the last is still
  // pending when the small page has been read three times.
  assert.ok(hostileSettled < 3, "the small page did not wait for the hostile pages");
  assert.ok(median(during) - median(alone) < MAX_DELAY_MS, timings);

  // The hostile conversions end: stopped at the deadline (or converted, on a machine fast enough),
  // each one billed the web_fetch price.
  await hostileEnded;
  const ids = await Promise.all(hostile);
  assert.ok(stats().killed >= 1, "a conversion ran past its deadline and its worker was terminated");
  assert.equal(stats().workers, 2, "terminated workers were replaced");
  const stopped = Object.keys(HOSTILE_PAGES).filter((path) =>
    resultOf(path).includes("Failed: the page is too large or too complex to convert to text in time."),
  );
  assert.ok(stopped.includes("/flat"), `stopped: ${stopped.join(", ")}`);
  for (const { id } of ids) {
    const record = await context.lookupGeneration(id, attacker.apiKey);
    assert.equal(record.status, "ok");
    assert.deepEqual(record.tool_costs_micro_usd, { web_fetch: String(FETCH_PRICE_MICRO_USD) });
    assert.equal(record.cost_micro_usd, String(TOKENS_MICRO_USD + FETCH_PRICE_MICRO_USD));
  }

  // The pool serves on, the hostile key included.
  toolResults.delete(`http://127.0.0.1:${pages.port}/small`);
  await fetchPage(attacker, "/small");
  assert.match(resultOf("/small"), /The small page's only paragraph/);
});

/**
 * What the gateway refuses around server tools, through a real gateway (embedded) with web_search
 * not configured and web_fetch at its safe defaults (no loopback escape hatch):
 *
 * - web_fetch of a cloud metadata address, of this machine's loopback and of a name that resolves
 *   to a private address: the model gets a refusal as the tool's result and no connection is ever
 *   attempted (the fetch tripwire records every connect and every lookup; the loopback target is
 *   a live server that counts its hits).
 * - Activations the gateway cannot honour are `invalid_request` before anything is reserved or
 *   sent upstream, in each format's envelope, naming the field: web_search not configured, a pdf
 *   engine the gateway does not have, image not configured, an unknown plugin, datetime with an
 *   unknown time zone.
 */
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { checkMessagesStream } from "../conformance/support/stream-rules.js";
import { parseSseFrames } from "../conformance/support/wire-tap.js";
import {
  type Canary,
  createTripwireNetwork,
  startCanary,
  type TripwireNetwork,
} from "../helpers/fetch-tripwire.js";
import { answer, assertExchangeCarried, callTools, usage } from "../helpers/scripted-tool-model.js";
import {
  LOOP_KINDS,
  type ServerToolsGateway,
  startServerToolsGateway,
} from "../helpers/server-tools-gateway.js";
import { readToolEvents } from "../helpers/tool-event-frames.js";

// biome-ignore lint/suspicious/noExplicitAny: wire JSON is read field by field.
type Json = any;

const ROUND = usage(100, 20);

let context: ServerToolsGateway;
let canary: Canary;
let network: TripwireNetwork;

before(async () => {
  canary = await startCanary();
  canary.route("/", (response) => response.writeHead(200, { "content-type": "text/plain" }).end("secret"));
  network = createTripwireNetwork({ dns: { "intranet.example.com": ["10.1.2.3"] } });
  context = await startServerToolsGateway({
    webSearch: false,
    // The canary's port is allowed, so only the address rule can refuse it.
    webFetch: { allowed_ports: [80, 443, canary.port] },
    fetchNetwork: network,
  });
});

after(async () => {
  await context?.close();
  await canary?.close();
});

test("web_fetch refuses metadata, loopback and private destinations without connecting", async () => {
  const loopback = `http://127.0.0.1:${canary.port}/`;
  const targets = [
    { url: "http://169.254.169.254/latest/meta-data/", host: "169.254.169.254" },
    { url: loopback, host: "127.0.0.1" },
    { url: "http://intranet.example.com/wiki", host: "intranet.example.com" },
  ];
  const calls = targets.map((target) => ({ name: "web_fetch", input: { url: target.url } }));
  const upstream = context.upstreams.anthropic;
  upstream.serve(
    callTools(upstream.kind, calls, { stream: true, usage: ROUND }),
    answer(upstream.kind, ["Those addresses cannot be read."], { stream: true, usage: ROUND }),
  );
  const mark = context.tap.exchanges.length;
  const message = await context.anthropic.messages
    .stream({
      model: upstream.model,
      max_tokens: 512,
      hi_tool_events: true,
      messages: [{ role: "user", content: "Read these pages." }],
      tools: [{ type: "web_fetch_20250910", name: "web_fetch" }],
    } as never)
    .finalMessage();

  assert.deepEqual(network.attempts, [], "no connection attempted");
  assert.deepEqual(network.violations, []);
  assert.deepEqual(network.lookups, ["intranet.example.com"], "only the host name was resolved");
  assert.deepEqual(canary.hits, [], "the loopback server was never reached");

  // The model read a refusal for each, and answered.
  assertExchangeCarried(
    upstream.kind,
    upstream.calls[1],
    targets.map((target, index) => ({
      call: calls[index],
      resultIncludes: [`Refused: ${target.host} is not a public internet address, so it is not fetched.`],
      resultExcludes: ["10.1.2.3", "secret"],
      failed: true,
    })),
  );
  const content = message.content as Json[];
  assert.deepEqual(
    content.filter((block) => block.type === "web_fetch_tool_result").map((block) => block.content),
    targets.map(() => ({ type: "web_fetch_tool_result_error", error_code: "url_not_allowed" })),
  );
  assert.equal(content.at(-1).text, "Those addresses cannot be read.");
  const body = await context.tap.since(mark)[0].body;
  checkMessagesStream(parseSseFrames(body));
  const failed = readToolEvents("messages", body).filter((event) => event.phase === "failed");
  assert.deepEqual(
    failed.map((event) => [event.input.url, event.error?.code, event.cost_micro_usd]),
    targets.map((target) => [target.url, "url_not_allowed", 0]),
  );
  const record = await context.lookupGeneration(message.id);
  assert.deepEqual(record.tool_costs_micro_usd, {}, "a refused fetch costs nothing");
});

interface Refusal {
  name: string;
  chat: { body: Record<string, unknown>; param: string };
  /**
   * Absent where the format has no way to ask for the tool explicitly: a tool the Responses format
   * lists that the gateway cannot run is left out (docs/formats.md, "Leniency and the drop report").
   */
  responses?: { body: Record<string, unknown>; param: string };
  messages: { body: Record<string, unknown>; param: string };
  /** Words every format's message has. */
  says: RegExp;
}

const REFUSALS: Refusal[] = [
  {
    name: "web_search not configured",
    chat: { body: { plugins: [{ id: "web_search" }] }, param: "plugins[0]" },
    messages: { body: { plugins: [{ id: "web_search" }] }, param: "plugins[0]" },
    says: /web_search server tool is not configured/,
  },
  {
    name: "pdf with an engine the gateway does not have",
    chat: { body: { plugins: [{ id: "pdf", engine: "ocr" }] }, param: "plugins[0].engine" },
    responses: {
      body: { tools: [{ type: "pdf", parameters: { engine: "ocr" } }] },
      param: "tools[0].engine",
    },
    messages: { body: { plugins: [{ id: "pdf", engine: "ocr" }] }, param: "plugins[0].engine" },
    says: /engine must be one of native, text/,
  },
  {
    name: "image not configured",
    chat: { body: { plugins: [{ id: "image" }] }, param: "plugins[0]" },
    messages: { body: { plugins: [{ id: "image" }] }, param: "plugins[0]" },
    says: /image server tool is not configured on this gateway \(server_tools\.image\.providers\)/,
  },
  {
    name: "an unknown plugin",
    chat: { body: { plugins: [{ id: "web_scraper" }] }, param: "plugins[0].id" },
    messages: { body: { plugins: [{ id: "web_scraper" }] }, param: "plugins[0].id" },
    // Each lists the tools it knows.
    says: /web_search, web_fetch, pdf, datetime, image/,
  },
  {
    name: "datetime with an unknown time zone",
    chat: { body: { plugins: [{ id: "datetime", timezone: "Mars/Base" }] }, param: "plugins[0].timezone" },
    responses: {
      body: { tools: [{ type: "datetime", parameters: { timezone: "Mars/Base" } }] },
      param: "tools[0].timezone",
    },
    messages: {
      body: { plugins: [{ id: "datetime", timezone: "Mars/Base" }] },
      param: "plugins[0].timezone",
    },
    says: /Unknown time zone "Mars\/Base"/,
  },
];

test("activations the gateway cannot honour are refused in each format's envelope, naming the field", async (t) => {
  const model = context.upstreams["openai-compatible"].model;
  const account = await context.createAccount();
  for (const kind of LOOP_KINDS) context.upstreams[kind].serve();
  for (const refusal of REFUSALS) {
    await t.test(refusal.name, async () => {
      const chat = await post(account.apiKey, "/api/v1/chat/completions", {
        model,
        messages: [{ role: "user", content: "hi" }],
        ...refusal.chat.body,
      });
      assert.equal(chat.status, 400, JSON.stringify(chat.body));
      assert.equal(chat.body.error.code, "invalid_request");
      assert.equal(chat.body.error.type, "invalid_request_error");
      assert.equal(chat.body.error.param, refusal.chat.param);
      assert.match(chat.body.error.message, refusal.says);

      if (refusal.responses !== undefined) {
        const responses = await post(account.apiKey, "/api/v1/responses", {
          model,
          input: "hi",
          ...refusal.responses.body,
        });
        assert.equal(responses.status, 400, JSON.stringify(responses.body));
        assert.equal(responses.body.error.code, "invalid_request");
        assert.equal(responses.body.error.param, refusal.responses.param);
        assert.match(responses.body.error.message, refusal.says);
      }

      const messages = await post(account.apiKey, "/api/v1/messages", {
        model,
        max_tokens: 64,
        messages: [{ role: "user", content: "hi" }],
        ...refusal.messages.body,
      });
      assert.equal(messages.status, 400, JSON.stringify(messages.body));
      assert.equal(messages.body.type, "error");
      assert.equal(messages.body.error.type, "invalid_request_error");
      assert.equal(messages.body.error.code, "invalid_request");
      // The Messages envelope has no `param`: its message names the field.
      assert.ok(
        messages.body.error.message.includes(refusal.messages.param),
        `"${messages.body.error.message}" names ${refusal.messages.param}`,
      );
      assert.match(messages.body.error.message, refusal.says);
    });
  }
  for (const kind of LOOP_KINDS)
    assert.equal(context.upstreams[kind].calls.length, 0, "nothing sent upstream");
  const spend = await post(account.apiKey, "/api/v1/key", undefined);
  assert.equal(spend.body.data.limits.total.spent_micro_usd, "0", "nothing billed");
});

async function post(apiKey: string, path: string, body: unknown): Promise<{ status: number; body: Json }> {
  const response = await fetch(`${context.url}${path}`, {
    method: body === undefined ? "GET" : "POST",
    headers: { authorization: `Bearer ${apiKey}`, "content-type": "application/json" },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: response.status, body: await response.json() };
}

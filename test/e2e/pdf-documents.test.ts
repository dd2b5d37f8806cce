/**
 * PDFs reach every model, end to end: the official clients send a real PDF (built in the test) to
 * a real gateway whose upstreams are loopback fakes. A model whose provider kind reads no PDFs
 * (`openai-compatible`) gets the document's text with its name and page markers, in all three
 * formats; an Anthropic model with vision gets the file. A PDF given by URL is fetched by the
 * gateway from a loopback server (web_fetch's test escape hatch), and a URL to a private address
 * is refused before any connection (a tripwire network records every connect). Unreadable PDFs
 * are `invalid_request` naming the part; the same PDF sent again is not parsed again; the pages
 * read are billed on the record's `pdf` line; failover re-reads the documents for the next route;
 * web_fetch of a PDF hands the model its text.
 */
import assert from "node:assert/strict";
import { once } from "node:events";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { after, before } from "node:test";
import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import { buildTestPdf, buildTextPages } from "../helpers/build-test-pdf.js";
import {
  type FakeAnthropicUpstream,
  startFakeAnthropicUpstream,
} from "../helpers/fake-anthropic-upstream.js";
import { buildChatCompletion, fakeReply, type RecordedRequest } from "../helpers/fake-openai-upstream.js";
import { createTripwireNetwork } from "../helpers/fetch-tripwire.js";
import { forEachGatewayMode, TEST_MODEL, TEST_PRICES, type TestGateway } from "../helpers/test-gateway.js";

/** Routes to the Anthropic fake; it reads PDFs. */
const CLAUDE_MODEL = "test/claude-model";
/** The openai-compatible fake first, the Anthropic fake second. */
const FAILOVER_MODEL = "test/failover-model";
/** $0.001 a page. */
const PAGE_MICRO_USD = 1_000;

const REPORT = buildTestPdf([
  { lines: ["Quarterly report", "Revenue grew 12 %"] },
  { lines: ["Costs fell by 3 %"] },
]);
const REPORT_TEXT = [
  '<file name="q3.pdf" pages="2">',
  "--- page 1 ---",
  "Quarterly report",
  "Revenue grew 12 %",
  "",
  "--- page 2 ---",
  "Costs fell by 3 %",
  "</file>",
].join("\n");
const SCAN = buildTestPdf([{ image: true }]);
const LOCKED = buildTestPdf(buildTextPages(1), {
  encrypt: { userPassword: "secret", ownerPassword: "owner" },
});
const DAMAGED = REPORT.subarray(0, 300);

let anthropic: FakeAnthropicUpstream;
let files: Server;
let filesPort = 0;
const fileHits: string[] = [];
/** The loopback escape hatch lets the file server through (its port, once it listens); every other connect is a violation. */
const loopbackPorts: number[] = [];
const network = createTripwireNetwork({ dns: { "intranet.test": ["10.1.2.3"] }, loopbackPorts });

before(async () => {
  anthropic = await startFakeAnthropicUpstream();
  files = createServer((request, response) => {
    fileHits.push(request.url ?? "");
    if (request.url === "/papers/q3-report.pdf") {
      response.writeHead(200, { "content-type": "application/pdf" }).end(REPORT);
    } else {
      response.writeHead(404).end();
    }
  });
  files.listen(0, "127.0.0.1");
  await once(files, "listening");
  filesPort = (files.address() as AddressInfo).port;
  loopbackPorts.push(filesPort);
});
after(async () => {
  await anthropic.close();
  files.closeAllConnections();
  await new Promise<void>((resolve) => files.close(() => resolve()));
});

function createCatalog(upstreamBaseUrl: string) {
  const provider = (id: string, kind: string, baseUrl: string) => ({
    id,
    kind,
    base_url: baseUrl,
    api_key_env: "FAKE_UPSTREAM_KEY",
    timeouts: { connect_ms: 2_000, first_byte_ms: 5_000, response_ms: 5_000, idle_ms: 5_000 },
  });
  const model = (slug: string, features: string[], routes: Array<[string, string]>) => ({
    slug,
    name: slug,
    provider: { slug: "test", name: "Test" },
    description: "A model served by a loopback fake",
    release_date: "2026-01-01",
    context_length: 128_000,
    max_output_tokens: 4_096,
    pricing: TEST_PRICES,
    features,
    datacenter_locations: ["local"],
    routes: routes.map(([provider, upstream]) => ({ provider, model: upstream })),
  });
  return {
    providers: [
      provider("fake", "openai-compatible", upstreamBaseUrl),
      provider("claude", "anthropic", anthropic.baseUrl),
    ],
    models: [
      // Vision or not, an openai-compatible host is not assumed to read PDFs.
      model(TEST_MODEL, ["tools", "streaming", "vision"], [["fake", "fake-upstream-model"]]),
      model(CLAUDE_MODEL, ["tools", "streaming", "vision"], [["claude", "claude-fake"]]),
      model(
        FAILOVER_MODEL,
        ["tools", "streaming", "vision"],
        [
          ["fake", "fake-upstream-model"],
          ["claude", "claude-fake"],
        ],
      ),
    ],
    routing: { breaker_failures: 1_000 },
    server_tools: {
      web_fetch: { unsafe_allow_loopback_for_tests: true, allowed_ports: [80, 443, filesPort] },
      pdf: { price_per_page_usd: "0.001" },
    },
  };
}

interface GenerationView {
  status: string;
  cost_micro_usd: string;
  tokens_prompt: number;
  tokens_completion: number;
  tool_costs_micro_usd: Record<string, string>;
  attempts: Array<{ provider: string; outcome: string }>;
}

async function readFinal(context: TestGateway, id: string): Promise<GenerationView> {
  for (const deadline = Date.now() + 5_000; ; ) {
    const response = await fetch(`${context.url}/api/v1/generation?id=${encodeURIComponent(id)}`, {
      headers: { authorization: `Bearer ${context.apiKey}` },
    });
    const body = (await response.json()) as { data: GenerationView };
    assert.equal(response.status, 200, JSON.stringify(body));
    if (body.data.status !== "in_progress" || Date.now() > deadline) return body.data;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** What the model was shown of the user's turn: every text of the upstream's first user message. */
function userTexts(request: RecordedRequest): string[] {
  const message = request.body.messages.find((entry: { role: string }) => entry.role === "user");
  if (typeof message.content === "string") return [message.content];
  return message.content
    .filter((part: { type: string }) => part.type === "text")
    .map((part: { text: string }) => part.text);
}

function userPartTypes(request: RecordedRequest): string[] {
  const message = request.body.messages.find((entry: { role: string }) => entry.role === "user");
  return typeof message.content === "string"
    ? ["text"]
    : message.content.map((part: { type: string }) => part.type);
}

const dataUrl = (bytes: Buffer) => `data:application/pdf;base64,${bytes.toString("base64")}`;

function chatWithFile(file: Record<string, string>, model = TEST_MODEL) {
  return {
    model,
    messages: [
      {
        role: "user" as const,
        content: [
          { type: "text" as const, text: "What does the report say?" },
          { type: "file" as const, file },
        ],
      },
    ],
  };
}

function anthropicClient(context: TestGateway): Anthropic {
  return new Anthropic({ apiKey: context.apiKey, baseURL: `${context.url}/api`, maxRetries: 0 });
}

async function refusal(
  promise: Promise<unknown>,
): Promise<{ status?: number; param?: string | null; message: string; code?: string | null }> {
  const error = await promise.then(
    () => assert.fail("expected the request to be refused"),
    (thrown: unknown) => thrown,
  );
  if (error instanceof OpenAI.APIError) {
    return { status: error.status, param: error.param, message: error.message, code: error.code };
  }
  assert.ok(error instanceof Anthropic.APIError, String(error));
  const body = error.error as { error: { message: string; code?: string } };
  return { status: error.status, message: body.error.message, code: body.error.code };
}

forEachGatewayMode(
  "PDFs reach every model",
  async (context, t) => {
    const expectedCost = (record: GenerationView, pages: number) =>
      record.tokens_prompt * 2 + record.tokens_completion * 8 + pages * PAGE_MICRO_USD;

    await t.test(
      "chat: a model that reads no PDFs gets the text with its name and page markers; pages are billed",
      async () => {
        const before = context.upstream.requests.length;
        const completion = await context.openai.chat.completions.create(
          chatWithFile({ filename: "q3.pdf", file_data: dataUrl(REPORT) }),
        );
        const sent = context.upstream.requests[before];
        assert.deepEqual(userTexts(sent), ["What does the report say?", REPORT_TEXT]);
        assert.ok(!userPartTypes(sent).includes("file"));
        const record = await readFinal(context, completion.id);
        assert.deepEqual(record.tool_costs_micro_usd, { pdf: String(2 * PAGE_MICRO_USD) });
        assert.equal(Number(record.cost_micro_usd), expectedCost(record, 2));
        assert.equal(
          Math.round((completion.usage as unknown as { cost: number }).cost * 1e6),
          Number(record.cost_micro_usd),
        );
      },
    );

    await t.test("responses: an input_file reaches the same model as text", async () => {
      const before = context.upstream.requests.length;
      const response = await context.openai.responses.create({
        model: TEST_MODEL,
        input: [
          {
            role: "user",
            content: [
              { type: "input_text", text: "What does the report say?" },
              { type: "input_file", filename: "q3.pdf", file_data: dataUrl(REPORT) },
            ],
          },
        ],
      });
      assert.deepEqual(userTexts(context.upstream.requests[before]), [
        "What does the report say?",
        REPORT_TEXT,
      ]);
      const record = await readFinal(context, response.id);
      assert.deepEqual(record.tool_costs_micro_usd, { pdf: String(2 * PAGE_MICRO_USD) });
    });

    await t.test(
      "messages: a document block reaches it as text too, streamed, named by its title",
      async () => {
        const before = context.upstream.requests.length;
        const message = await anthropicClient(context)
          .messages.stream({
            model: TEST_MODEL,
            max_tokens: 256,
            messages: [
              {
                role: "user",
                content: [
                  { type: "text", text: "What does the report say?" },
                  {
                    type: "document",
                    title: "q3.pdf",
                    source: {
                      type: "base64",
                      media_type: "application/pdf",
                      data: REPORT.toString("base64"),
                    },
                  },
                ],
              },
            ],
          })
          .finalMessage();
        assert.deepEqual(userTexts(context.upstream.requests[before]), [
          "What does the report say?",
          REPORT_TEXT,
        ]);
        const record = await readFinal(context, message.id);
        assert.deepEqual(record.tool_costs_micro_usd, { pdf: String(2 * PAGE_MICRO_USD) });
      },
    );

    await t.test("a model that reads PDFs gets the file as sent, and reading costs nothing", async () => {
      const before = anthropic.requests.length;
      const completion = await context.openai.chat.completions.create(
        chatWithFile({ filename: "q3.pdf", file_data: dataUrl(REPORT) }, CLAUDE_MODEL),
      );
      const document = anthropic.requests[before].body.messages[0].content[1];
      assert.deepEqual(document, {
        type: "document",
        source: { type: "base64", media_type: "application/pdf", data: REPORT.toString("base64") },
        title: "q3.pdf",
      });
      const record = await readFinal(context, completion.id);
      assert.deepEqual(record.tool_costs_micro_usd, {});
      assert.equal(Number(record.cost_micro_usd), expectedCost(record, 0));
    });

    await t.test("the pdf plugin's text engine sends the text even to a model that reads PDFs", async () => {
      const before = anthropic.requests.length;
      await context.openai.chat.completions.create({
        ...chatWithFile({ filename: "q3.pdf", file_data: dataUrl(REPORT) }, CLAUDE_MODEL),
        // OpenRouter's spelling of the engine, nested as its clients send it.
        // @ts-expect-error plugins is the gateway's own field
        plugins: [{ id: "pdf", pdf: { engine: "pdf-text" } }],
      });
      assert.deepEqual(anthropic.requests[before].body.messages[0].content[1], {
        type: "text",
        text: REPORT_TEXT,
      });
      const refused = await refusal(
        context.openai.chat.completions.create({
          ...chatWithFile({ filename: "q3.pdf", file_data: dataUrl(REPORT) }),
          // @ts-expect-error plugins is the gateway's own field
          plugins: [{ id: "pdf", engine: "mistral-ocr" }],
        }),
      );
      assert.deepEqual([refused.status, refused.param], [400, "plugins[0].engine"]);
    });

    await t.test("the same PDF in the next turn is not parsed again", async () => {
      const parses = context.gateway.pdfStats()!.parses;
      const hits = context.gateway.pdfStats()!.cacheHits;
      await context.openai.chat.completions.create(
        chatWithFile({ filename: "q3.pdf", file_data: dataUrl(REPORT) }),
      );
      assert.equal(context.gateway.pdfStats()!.parses, parses);
      assert.equal(context.gateway.pdfStats()!.cacheHits, hits + 1);
    });

    await t.test(
      "a PDF by URL is fetched by the gateway: read for one model, inlined for the other",
      async () => {
        const url = `http://127.0.0.1:${filesPort}/papers/q3-report.pdf`;
        const hitsBefore = fileHits.length;
        const before = context.upstream.requests.length;
        await context.openai.chat.completions.create(chatWithFile({ file_url: url }));
        assert.deepEqual(userTexts(context.upstream.requests[before]), [
          "What does the report say?",
          REPORT_TEXT.replace('name="q3.pdf"', 'name="q3-report.pdf"'),
        ]);
        const anthropicBefore = anthropic.requests.length;
        await context.openai.chat.completions.create(chatWithFile({ file_url: url }, CLAUDE_MODEL));
        assert.deepEqual(anthropic.requests[anthropicBefore].body.messages[0].content[1], {
          type: "document",
          source: { type: "base64", media_type: "application/pdf", data: REPORT.toString("base64") },
          title: "q3-report.pdf",
        });
        assert.equal(fileHits.length, hitsBefore + 2);
        assert.deepEqual(network.violations, []);
      },
    );

    await t.test(
      "a PDF URL to a private address is refused before any connection, naming the part",
      async () => {
        const attempts = network.attempts.length;
        const before = context.upstream.requests.length;
        for (const url of ["http://intranet.test/q3.pdf", "http://169.254.169.254/latest/q3.pdf"]) {
          const error = await refusal(
            context.openai.chat.completions.create(chatWithFile({ file_url: url })),
          );
          assert.equal(error.status, 400);
          assert.equal(error.code, "invalid_request");
          assert.equal(error.param, "messages[0].content[1]");
          assert.match(error.message, /is not a public internet address, so it is not fetched/);
        }
        assert.equal(network.attempts.length, attempts);
        assert.deepEqual(network.violations, []);
        assert.equal(context.upstream.requests.length, before);
      },
    );

    await t.test(
      "a scanned, an encrypted and a damaged PDF are invalid_request naming the part, in each format",
      async () => {
        const before = context.upstream.requests.length;
        const scanned = await refusal(
          context.openai.chat.completions.create(
            chatWithFile({ filename: "scan.pdf", file_data: dataUrl(SCAN) }),
          ),
        );
        assert.deepEqual(
          [scanned.status, scanned.code, scanned.param],
          [400, "invalid_request", "messages[0].content[1]"],
        );
        assert.match(scanned.message, /"scan\.pdf" has no text layer/);

        const locked = await refusal(
          context.openai.responses.create({
            model: TEST_MODEL,
            input: [
              {
                role: "user",
                content: [
                  { type: "input_text", text: "Read this" },
                  { type: "input_file", filename: "locked.pdf", file_data: dataUrl(LOCKED) },
                ],
              },
            ],
          }),
        );
        assert.deepEqual([locked.status, locked.param], [400, "input[0].content[1]"]);
        assert.match(locked.message, /"locked\.pdf" is encrypted and needs a password/);

        const damaged = await refusal(
          anthropicClient(context).messages.create({
            model: TEST_MODEL,
            max_tokens: 64,
            messages: [
              {
                role: "user",
                content: [
                  { type: "text", text: "Read this" },
                  {
                    type: "document",
                    title: "cut.pdf",
                    source: {
                      type: "base64",
                      media_type: "application/pdf",
                      data: DAMAGED.toString("base64"),
                    },
                  },
                ],
              },
            ],
          }),
        );
        assert.equal(damaged.status, 400);
        // The Messages envelope has no param: the message names the part.
        assert.match(damaged.message, /^messages\[0\]\.content\[1\]: "cut\.pdf" could not be read as a PDF/);
        assert.equal(context.upstream.requests.length, before);
      },
    );

    await t.test("failover to a route that reads PDFs sends it the file, and bills no pages", async () => {
      const before = context.upstream.requests.length;
      const anthropicBefore = anthropic.requests.length;
      context.upstream.enqueue(fakeReply.error(503, { error: { message: "Service Unavailable" } }));
      const completion = await context.openai.chat.completions.create(
        chatWithFile({ filename: "q3.pdf", file_data: dataUrl(REPORT) }, FAILOVER_MODEL),
      );
      assert.deepEqual(userTexts(context.upstream.requests[before]), [
        "What does the report say?",
        REPORT_TEXT,
      ]);
      assert.equal(anthropic.requests[anthropicBefore].body.messages[0].content[1].type, "document");
      const record = await readFinal(context, completion.id);
      assert.deepEqual(
        record.attempts.map((attempt) => [attempt.provider, attempt.outcome]),
        [
          ["fake", "provider_unavailable"],
          ["claude", "ok"],
        ],
      );
      assert.deepEqual(record.tool_costs_micro_usd, {});
    });

    await t.test(
      "web_fetch of a PDF gives the model its text with page markers; its pages are billed",
      async () => {
        const url = `http://127.0.0.1:${filesPort}/papers/q3-report.pdf`;
        const before = context.upstream.requests.length;
        context.upstream.enqueue(
          fakeReply.json(
            buildChatCompletion({
              toolCalls: [{ id: "call_1", name: "web_fetch", arguments: JSON.stringify({ url }) }],
            }),
          ),
          fakeReply.json(buildChatCompletion({ content: "Revenue grew 12 %." })),
        );
        const completion = await context.openai.chat.completions.create({
          model: TEST_MODEL,
          messages: [{ role: "user", content: `Read ${url}` }],
          // @ts-expect-error plugins is the gateway's own field
          plugins: [{ id: "web_fetch" }],
        });
        assert.equal(completion.choices[0].message.content, "Revenue grew 12 %.");
        const toolMessage = context.upstream.requests[before + 1].body.messages.find(
          (message: { role: string }) => message.role === "tool",
        );
        const result =
          typeof toolMessage.content === "string" ? toolMessage.content : toolMessage.content[0].text;
        assert.ok(result.endsWith(REPORT_TEXT.replace('name="q3.pdf"', 'name="q3-report.pdf"')), result);
        assert.doesNotMatch(result, /not read/);
        const record = await readFinal(context, completion.id);
        assert.deepEqual(record.tool_costs_micro_usd, { pdf: String(2 * PAGE_MICRO_USD) });
      },
    );
  },
  // Credit enough for a tool round's reservation, which bounds the next prompt by the context length.
  { configOverrides: createCatalog, serverTools: { fetchNetwork: network }, credits: "1000" },
);

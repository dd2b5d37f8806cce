/**
 * A reservation bounds what the upstream can bill for the documents and images actually sent, so
 * a tight spend limit holds whatever the attachments: a 7 MB text file, a 7 MB PDF of 60 pages
 * (its pages packed in an object stream, as PDF 1.5+ writers do), a dozen large images, each in
 * every format, each format routed to another provider kind. The fake upstreams bill what their
 * provider would (never more than the model's context length: a longer prompt is refused, not
 * billed). A request that could bill more than the key has left is refused up front; one that
 * fits is billed exactly what its upstream reported; and the key's settled spend never passes its
 * limit. (With a flat 3,000 tokens per file, the 7 MB text file alone settled at twelve times the
 * limit.)
 */
import assert from "node:assert/strict";
import { type TestContext, test } from "node:test";
import {
  anthropicReply,
  buildMessage,
  buildUsage,
  startFakeAnthropicUpstream,
} from "../helpers/fake-anthropic-upstream.js";
import {
  buildGenerateContentResponse,
  fakeGoogleReply,
  startFakeGoogleUpstream,
} from "../helpers/fake-google-upstream.js";
import {
  buildResponse,
  responsesReply,
  startFakeOpenAiResponsesUpstream,
} from "../helpers/fake-openai-responses-upstream.js";
import type { FakeOpenAiUpstream } from "../helpers/fake-openai-upstream.js";
import { createFakeRoutesCatalog } from "../helpers/fake-routes-catalog.js";
import { createPdf, createPngHeader } from "../helpers/media-fixtures.js";
import { requireMode } from "../helpers/storage-modes.js";
import { GATEWAY_MODES, startTestGateway, type TestGateway } from "../helpers/test-gateway.js";

/** Claude-like prices: $3/M input, $15/M output. */
const PRICES = { prompt: "3", completion: "15" };
const CONTEXT_LENGTH = 200_000;
const LIMIT_USD = "0.05";
const LIMIT_MICRO_USD = 50_000;
const MAX_TOKENS = 100;

type Format = "chat" | "responses" | "messages";
type Kind = "google" | "openai" | "anthropic";
/** Each format goes to another provider kind, so every kind's bounds are exercised. */
const ROUTES: Record<Format, Kind> = { chat: "google", responses: "openai", messages: "anthropic" };
const PATHS: Record<Format, string> = {
  chat: "/api/v1/chat/completions",
  responses: "/api/v1/responses",
  messages: "/api/v1/messages",
};

interface Attachment {
  kind: "text" | "pdf" | "image";
  base64: string;
  mediaType: string;
}

interface Case {
  name: string;
  attachments: Attachment[];
  /** Input tokens the upstream of each kind bills for it (capped by the context length). */
  billedInput: Record<Kind, number>;
  /** Whether it fits the $0.05 limit at that bill. */
  fits: boolean;
}

function createCases(): Case[] {
  const text = Buffer.alloc(7_000_000, "Quarterly figures, region by region. ").toString("base64");
  const pdf = createPdf(60, { packed: true, padTo: 7_000_000 }).toString("base64");
  const large = createPngHeader(4_000, 3_000).toString("base64");
  const small = createPngHeader(256, 256).toString("base64");
  const all = (tokens: number) => ({ google: tokens, openai: tokens, anthropic: tokens });
  return [
    {
      name: "a 7 MB text file",
      attachments: [{ kind: "text", base64: text, mediaType: "text/plain" }],
      // About four bytes a token: far past any context length.
      billedInput: all(CONTEXT_LENGTH),
      fits: false,
    },
    {
      name: "a 7 MB PDF of 60 pages",
      attachments: [{ kind: "pdf", base64: pdf, mediaType: "application/pdf" }],
      // Each page's text and picture: ~3,600 tokens a page, past the context length.
      billedInput: all(CONTEXT_LENGTH),
      fits: false,
    },
    {
      name: "12 images of 4000×3000",
      attachments: Array.from({ length: 12 }, () => ({
        kind: "image" as const,
        base64: large,
        mediaType: "image/png",
      })),
      // Per image: Gemini 24 tiles of 258; OpenAI's patches, 1,536 at most ×2.46; Anthropic ~5,000.
      billedInput: { google: 12 * 24 * 258, openai: 12 * 3_779, anthropic: 12 * 5_000 },
      fits: false,
    },
    {
      name: "one small image",
      attachments: [{ kind: "image", base64: small, mediaType: "image/png" }],
      // The image (Gemini 258, OpenAI one tile 85 + 170, Anthropic 256² / 750) and the short text.
      billedInput: { google: 258 + 10, openai: 85 + 170 + 8, anthropic: 88 + 10 },
      fits: true,
    },
  ];
}

function createBody(format: Format, model: string, attachments: Attachment[]): string {
  const dataUrl = (item: Attachment) => `data:${item.mediaType};base64,${item.base64}`;
  switch (format) {
    case "chat":
      return JSON.stringify({
        model,
        max_tokens: MAX_TOKENS,
        messages: [
          {
            role: "user",
            content: [
              { type: "text", text: "Summarise what is attached." },
              ...attachments.map((item) =>
                item.kind === "image"
                  ? { type: "image_url", image_url: { url: dataUrl(item) } }
                  : { type: "file", file: { file_data: dataUrl(item), filename: `report.${item.kind}` } },
              ),
            ],
          },
        ],
      });
    case "responses":
      return JSON.stringify({
        model,
        max_output_tokens: MAX_TOKENS,
        input: [
          {
            role: "user",
            content: [
              { type: "input_text", text: "Summarise what is attached." },
              ...attachments.map((item) =>
                item.kind === "image"
                  ? { type: "input_image", image_url: dataUrl(item) }
                  : { type: "input_file", file_data: dataUrl(item), filename: `report.${item.kind}` },
              ),
            ],
          },
        ],
      });
    case "messages":
      return JSON.stringify({
        model,
        max_tokens: MAX_TOKENS,
        messages: [
          {
            role: "user",
            content: [
              { type: "text", text: "Summarise what is attached." },
              ...attachments.map((item) =>
                item.kind === "image"
                  ? {
                      type: "image",
                      source: { type: "base64", media_type: item.mediaType, data: item.base64 },
                    }
                  : item.kind === "text"
                    ? {
                        type: "document",
                        source: {
                          type: "text",
                          media_type: item.mediaType,
                          data: Buffer.from(item.base64, "base64").toString("utf8"),
                        },
                      }
                    : {
                        type: "document",
                        source: { type: "base64", media_type: item.mediaType, data: item.base64 },
                      },
              ),
            ],
          },
        ],
      });
  }
}

interface Fakes {
  google: FakeOpenAiUpstream;
  openai: FakeOpenAiUpstream;
  anthropic: FakeOpenAiUpstream;
}

/** Each fake answers with the usage the test set for its kind. */
async function startFakes(t: TestContext): Promise<{ fakes: Fakes; bill(kind: Kind, tokens: number): void }> {
  const bills: Record<Kind, number> = { google: 0, openai: 0, anthropic: 0 };
  const fakes: Fakes = {
    google: await startFakeGoogleUpstream(),
    openai: await startFakeOpenAiResponsesUpstream(),
    anthropic: await startFakeAnthropicUpstream(),
  };
  t.after(() => Promise.all(Object.values(fakes).map((fake) => fake.close())));
  fakes.google.setHandler(() => {
    const input = bills.google;
    const usage = { promptTokenCount: input, candidatesTokenCount: OUTPUT, totalTokenCount: input + OUTPUT };
    return fakeGoogleReply.json(buildGenerateContentResponse({ usage }));
  });
  fakes.openai.setHandler(() => {
    const input = bills.openai;
    const usage = {
      input_tokens: input,
      input_tokens_details: { cached_tokens: 0 },
      output_tokens: OUTPUT,
      output_tokens_details: { reasoning_tokens: 0 },
      total_tokens: input + OUTPUT,
    };
    return responsesReply.json(buildResponse({ usage }));
  });
  fakes.anthropic.setHandler(() =>
    anthropicReply.json(
      buildMessage({ usage: buildUsage({ input_tokens: bills.anthropic, output_tokens: OUTPUT }) }),
    ),
  );
  return {
    fakes,
    bill(kind, tokens) {
      bills[kind] = tokens;
    },
  };
}

/** Output tokens every fake answer reports. */
const OUTPUT = 50;

/** The bill at $3/M input and $15/M output, in micro-USD. */
function costMicroUsd(input: number): number {
  return input * 3 + OUTPUT * 15;
}

/** Providers and models of the three kinds, at the same prices and context length. */
function createCatalog(fakes: Fakes) {
  return createFakeRoutesCatalog(
    [
      { id: "google", kind: "google", baseUrl: fakes.google.baseUrl },
      { id: "openai", kind: "openai-responses", baseUrl: fakes.openai.baseUrl },
      { id: "anthropic", kind: "anthropic", baseUrl: fakes.anthropic.baseUrl },
    ],
    { contextLength: CONTEXT_LENGTH, pricing: PRICES },
  );
}

async function readTotalSpend(context: TestGateway, apiKey: string): Promise<number> {
  const response = await fetch(`${context.url}/api/v1/key`, {
    headers: { authorization: `Bearer ${apiKey}` },
  });
  const { data } = (await response.json()) as {
    data: { limits: { total: { spent_micro_usd: string; reserved_micro_usd: string | null } } };
  };
  assert.equal(data.limits.total.reserved_micro_usd, "0", "no reservation is left behind");
  return Number(data.limits.total.spent_micro_usd);
}

for (const format of ["chat", "responses", "messages"] as Format[]) {
  for (const mode of GATEWAY_MODES) {
    test(`${format}: documents and images near the body limit never take spend past a $${LIMIT_USD} limit [${mode}]`, async (t) => {
      if (mode === "distributed") {
        if (!(await requireMode(t, "postgres")) || !(await requireMode(t, "redis"))) return;
      }
      // The catalog routes to the fakes, so they start first.
      const { fakes, bill } = await startFakes(t);
      const context = await startTestGateway(mode, { configOverrides: createCatalog(fakes) });
      t.after(() => context.close());
      await sendEveryCase(context, format, bill);
    });
  }
}

async function sendEveryCase(
  context: TestGateway,
  format: Format,
  bill: (kind: Kind, tokens: number) => void,
): Promise<void> {
  const kind = ROUTES[format];
  const model = `test/${kind}-model`;
  for (const testCase of createCases()) {
    const { secret } = await context.admin.createKey({
      workspaceId: context.workspaceId,
      name: testCase.name,
      totalLimitUsd: LIMIT_USD,
    });
    const billed = testCase.billedInput[kind];
    bill(kind, billed);
    const response = await fetch(`${context.url}${PATHS[format]}`, {
      method: "POST",
      headers: { authorization: `Bearer ${secret}`, "content-type": "application/json" },
      body: createBody(format, model, testCase.attachments),
    });
    const text = await response.text();
    const what = `${format} → ${kind}, ${testCase.name}`;
    if (testCase.fits) {
      assert.equal(response.status, 200, `${what}: ${text.slice(0, 300)}`);
      // Billed what the upstream reported: the reservation covered it, nothing was cut.
      const generation = await fetch(
        `${context.url}/api/v1/generation?id=${response.headers.get("x-request-id")}`,
        {
          headers: { authorization: `Bearer ${secret}` },
        },
      );
      const { data } = (await generation.json()) as { data: { cost_micro_usd: string } };
      assert.equal(Number(data.cost_micro_usd), costMicroUsd(billed), what);
    } else {
      assert.equal(
        response.status,
        402,
        `${what}: expected a refusal, got ${response.status}: ${text.slice(0, 300)}`,
      );
      assert.match(text, /key_limit_exceeded/, what);
    }
    const spent = await readTotalSpend(context, secret);
    assert.ok(
      spent <= LIMIT_MICRO_USD,
      `${what}: settled ${spent} µUSD against a limit of ${LIMIT_MICRO_USD}`,
    );
  }
}

for (const mode of GATEWAY_MODES) {
  test(`an upstream billing past every published rule is billed the reservation, never past the limit [${mode}]`, async (t) => {
    if (mode === "distributed") {
      if (!(await requireMode(t, "postgres")) || !(await requireMode(t, "redis"))) return;
    }
    const { fakes, bill } = await startFakes(t);
    const context = await startTestGateway(mode, { configOverrides: createCatalog(fakes) });
    t.after(() => context.close());
    const { secret } = await context.admin.createKey({
      workspaceId: context.workspaceId,
      totalLimitUsd: LIMIT_USD,
    });
    // A million input tokens for one short sentence: more than the model even accepts.
    bill("anthropic", 1_000_000);
    const response = await fetch(`${context.url}/api/v1/messages`, {
      method: "POST",
      headers: { authorization: `Bearer ${secret}`, "content-type": "application/json" },
      body: JSON.stringify({
        model: "test/anthropic-model",
        max_tokens: MAX_TOKENS,
        messages: [{ role: "user", content: "Say hi." }],
      }),
    });
    const body = (await response.json()) as { usage: { input_tokens: number } };
    assert.equal(response.status, 200);
    assert.equal(body.usage.input_tokens, 1_000_000, "the upstream's usage is reported as it came");
    const generation = await fetch(
      `${context.url}/api/v1/generation?id=${response.headers.get("x-request-id")}`,
      {
        headers: { authorization: `Bearer ${secret}` },
      },
    );
    const { data } = (await generation.json()) as { data: { cost_micro_usd: string } };
    const cost = Number(data.cost_micro_usd);
    assert.ok(cost < costMicroUsd(1_000_000), `billed ${cost} µUSD, the reservation at most`);
    // The reservation: the sentence's bytes and framing at $3/M plus 100 output tokens at $15/M.
    assert.ok(cost > MAX_TOKENS * 15 && cost < 2 * MAX_TOKENS * 15, `${cost} µUSD`);
    assert.ok((await readTotalSpend(context, secret)) <= LIMIT_MICRO_USD);
  });
}

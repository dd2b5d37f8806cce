/**
 * The image tool in the Responses format, judged by the official `openai` client: a loopback server
 * decodes each POST /responses with the real decoder and answers with the encoders' output for a
 * run that made one image and failed another (test/helpers/image-tool-run.ts), streamed or not.
 */
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, test } from "node:test";
import OpenAI from "openai";
import {
  AFTER_TEXT,
  BEFORE_TEXT,
  GENERATED_BASE64,
  GENERATED_PNG,
  imageToolRunParts,
  imageToolRunResult,
} from "../../../test/helpers/image-tool-run.js";
import type { CanonicalRequest } from "../../canonical/index.js";
import type { Settlement } from "../../canonical/settlement.js";
import { GatewayError } from "../../errors/gateway-error.js";
import type { ResponsesEncodeContext } from "./create-response-object.js";
import { decodeResponsesRequest } from "./decode-request.js";
import { encodeResponsesResult } from "./encode-result.js";
import { createItemSeal } from "./item-seal.js";
import { createResponsesStreamEncoder } from "./stream-encoder.js";

const itemSeal = createItemSeal(randomBytes(32));
const decodedRequests: CanonicalRequest[] = [];
let server: Server;
let client: OpenAI;

function answer(body: Record<string, unknown>, decoded: CanonicalRequest): string {
  const events = decoded.toolEvents;
  const context: ResponsesEncodeContext = {
    requestId: "01JIMAGES000000000000000",
    model: String(body.model),
    createdAt: 1_764_000_000,
    request: decoded,
  };
  const result = imageToolRunResult(events);
  const settlement: Settlement = { usage: result.usage, costMicroUsd: 64_000, finishReason: "stop" };
  if (body.stream !== true)
    return JSON.stringify(encodeResponsesResult(result, settlement, context, itemSeal));
  const encoder = createResponsesStreamEncoder(context, itemSeal);
  let sse = "";
  for (const part of imageToolRunParts(events)) sse += encoder.push(part);
  return sse + encoder.finish(settlement);
}

before(async () => {
  server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => {
      const body = JSON.parse(Buffer.concat(chunks).toString("utf8")) as Record<string, unknown>;
      try {
        const decoded = decodeResponsesRequest(body, { itemSeal });
        decodedRequests.push(decoded);
        const type = body.stream === true ? "text/event-stream" : "application/json";
        response.writeHead(200, { "content-type": type }).end(answer(body, decoded));
      } catch (error) {
        if (!(error instanceof GatewayError)) throw error;
        response
          .writeHead(error.status, { "content-type": "application/json" })
          .end(JSON.stringify({ error: { message: error.message, type: error.code, param: error.param } }));
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  client = new OpenAI({ apiKey: "sk-test", baseURL: `http://127.0.0.1:${port}/api/v1`, maxRetries: 0 });
});

after(() => new Promise<void>((resolve) => server.close(() => resolve())));

function params(events = false) {
  return {
    model: "scripted/image",
    input: "Draw a red fox.",
    tools: [{ type: "image_generation" }],
    hi_tool_events: events,
  } as unknown as OpenAI.Responses.ResponseCreateParamsNonStreaming;
}

type ImageCall = OpenAI.Responses.ResponseOutputItem.ImageGenerationCall & {
  revised_prompt?: string;
  size?: string;
  output_format?: string;
};

function imageCalls(output: OpenAI.Responses.ResponseOutputItem[]): ImageCall[] {
  return output.filter((item): item is ImageCall => item.type === "image_generation_call");
}

/** Ids without their seal (a streamed message's id goes out before its text, so it has none). */
function comparable(output: OpenAI.Responses.ResponseOutputItem[]): unknown {
  return JSON.parse(
    JSON.stringify(output, (key, value) =>
      key === "parsed" ? undefined : key === "id" && typeof value === "string" ? value.split(".")[0] : value,
    ),
  );
}

test("create() and responses.stream() end with the same items: message, the image, the failed call, message", async () => {
  const created = await client.responses.create(params());
  const streamed = await client.responses.stream({ ...params(), stream: true }).finalResponse();
  for (const response of [created, streamed]) {
    assert.deepEqual(
      response.output.map((item) => [item.type, "status" in item ? item.status : undefined]),
      [
        ["message", "completed"],
        ["image_generation_call", "completed"],
        ["image_generation_call", "failed"],
        ["message", "completed"],
      ],
    );
    const [made, failed] = imageCalls(response.output);
    assert.equal(made.result, GENERATED_BASE64);
    assert.deepEqual(Buffer.from(made.result ?? "", "base64"), GENERATED_PNG, "the image's bytes, intact");
    assert.equal(made.revised_prompt, "A red fox in snow.");
    assert.equal(made.size, "40x30");
    assert.equal(made.output_format, "png");
    assert.equal(failed.result, null);
    assert.match(made.id, /^ig_call_img1\./, "sealed like a web_search_call id");
    assert.equal(response.output_text, BEFORE_TEXT + AFTER_TEXT);
  }
  assert.deepEqual(comparable(streamed.output), comparable(created.output));
});

test("raw stream: each call's item is added in progress, then in_progress and generating; its result completes it", async () => {
  const stream = await client.responses.create({ ...params(true), stream: true });
  const events: Array<Record<string, unknown> & { type: string; sequence_number: number }> = [];
  for await (const event of stream) events.push(event as never);
  assert.deepEqual(
    events.map((event) => event.sequence_number),
    events.map((_, index) => index),
    "sequence numbers without gaps",
  );
  const [madeId, failedId] = events
    .filter((event) => event.type === "response.output_item.added")
    .map((event) => (event.item as { id: string }).id)
    .filter((id) => id.startsWith("ig_"));
  const shown = events
    .filter((event) => event.type !== "response.output_text.delta")
    .map((event) => {
      const item = event.item as { id?: string; type?: string; status?: string; result?: string } | undefined;
      const tool = event.hi_tool_event as { phase: string; call_id: string; output?: unknown } | undefined;
      const id = (event.item_id as string | undefined) ?? item?.id ?? tool?.call_id;
      const who = id === madeId ? "made" : id === failedId ? "failed" : "";
      if (tool !== undefined) return `${event.type} ${tool.phase} ${who}`;
      return [event.type, who, item?.type === "image_generation_call" ? item.status : ""]
        .filter(Boolean)
        .join(" ");
    });
  assert.deepEqual(shown, [
    "response.created",
    "response.in_progress",
    "response.output_item.added",
    "response.content_part.added",
    "response.output_text.done",
    "response.content_part.done",
    "response.output_item.done",
    "response.output_item.added made in_progress",
    "response.image_generation_call.in_progress made",
    "response.image_generation_call.generating made",
    "keepalive started made",
    "response.output_item.added failed in_progress",
    "response.image_generation_call.in_progress failed",
    "response.image_generation_call.generating failed",
    "keepalive started failed",
    "response.image_generation_call.completed made",
    "response.output_item.done made completed",
    "keepalive completed made",
    "response.output_item.done failed failed",
    "keepalive failed failed",
    "response.output_item.added",
    "response.content_part.added",
    "response.output_text.done",
    "response.content_part.done",
    "response.output_item.done",
    "response.completed",
  ]);
  const added = events.find(
    (event) => event.type === "response.output_item.added" && (event.item as { id: string }).id === madeId,
  );
  assert.deepEqual(added?.item, { id: madeId, type: "image_generation_call", status: "in_progress" });
  const completedEvent = events.find(
    (event) => event.type === "keepalive" && (event.hi_tool_event as { phase: string }).phase === "completed",
  );
  assert.ok(completedEvent, "the completed image's event");
  assert.deepEqual((completedEvent.hi_tool_event as { output: unknown }).output, {
    media_type: "image/png",
    size: "40x30",
    bytes: GENERATED_PNG.length,
  });
  assert.ok(!JSON.stringify(completedEvent).includes(GENERATED_BASE64.slice(0, 40)), "no image in the event");
});

test("replay: the output sent back whole, or by item_reference, decodes to the turn's text; images are dropped", async () => {
  for (const stream of [false, true]) {
    const previous = stream
      ? await client.responses.stream({ ...params(), stream: true }).finalResponse()
      : await client.responses.create(params());
    const followUp = { role: "user" as const, content: "Make it blue." };
    await client.responses.create({
      ...params(),
      input: [
        { role: "user", content: "Draw a red fox." },
        ...(previous.output as OpenAI.Responses.ResponseInputItem[]),
        followUp,
      ],
    });
    const whole = decodedRequests.at(-1)!.messages;
    assert.deepEqual(whole[1], {
      role: "assistant",
      content: [
        { type: "text", text: BEFORE_TEXT },
        { type: "text", text: AFTER_TEXT },
      ],
    });
    if (stream) continue;
    await client.responses.create({
      ...params(),
      input: [
        { role: "user", content: "Draw a red fox." },
        ...previous.output.map((item) => ({ type: "item_reference" as const, id: item.id! })),
        followUp,
      ],
    });
    assert.deepEqual(decodedRequests.at(-1)!.messages, whole);
  }
});

test("replay: an image_generation_call reference the gateway did not issue is refused naming the item", async () => {
  await assert.rejects(
    client.responses.create({
      ...params(),
      input: [
        { type: "item_reference", id: "ig_68f0c2a1b9e48190a4" },
        { role: "user", content: "Again" },
      ],
    }),
    (error: unknown) => error instanceof OpenAI.BadRequestError && /input\[0\]/.test(error.message),
  );
});

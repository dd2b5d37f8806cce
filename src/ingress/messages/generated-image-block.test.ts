/**
 * The image tool in the Messages format, read by the official `@anthropic-ai/sdk` over real HTTP: a
 * loopback server decodes each request with the format's decoder and answers with its encoders for
 * a run that made one image and failed another (test/helpers/image-tool-run.ts).
 */
import assert from "node:assert/strict";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, test } from "node:test";
import Anthropic from "@anthropic-ai/sdk";
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
import { createMessagesErrorEnvelope } from "../../errors/envelopes.js";
import { GatewayError } from "../../errors/gateway-error.js";
import { countMessagesTokens } from "./count-messages-tokens.js";
import { decodeMessagesRequest } from "./decode-request.js";
import { encodeMessagesResult } from "./encode-result.js";
import { messagesResponseSchema } from "./response-schema.js";
import { createMessagesStreamEncoder } from "./stream-encoder.js";

const decoded: CanonicalRequest[] = [];
let server: Server;
let client: Anthropic;

const result = imageToolRunResult();
const settlement: Settlement = {
  usage: result.usage,
  costMicroUsd: 64_000,
  finishReason: "stop",
  serverToolCalls: { image: 2 },
};
const context = { requestId: "01JIMAGEMESSAGES00000000", model: "anthropic/claude-sonnet-4.5", createdAt: 1 };

before(async () => {
  server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => {
      let canonical: CanonicalRequest;
      try {
        canonical = decodeMessagesRequest(JSON.parse(Buffer.concat(chunks).toString("utf8")));
      } catch (error) {
        if (!(error instanceof GatewayError)) throw error;
        response.writeHead(error.status, { "content-type": "application/json" });
        response.end(JSON.stringify(createMessagesErrorEnvelope(error, context.requestId)));
        return;
      }
      decoded.push(canonical);
      if (!canonical.stream) {
        response.writeHead(200, { "content-type": "application/json" });
        response.end(JSON.stringify(encodeMessagesResult(result, settlement, context)));
        return;
      }
      response.writeHead(200, { "content-type": "text/event-stream" });
      const encoder = createMessagesStreamEncoder(context);
      for (const part of imageToolRunParts(canonical.toolEvents)) response.write(encoder.push(part));
      response.end(encoder.finish(settlement));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  client = new Anthropic({ apiKey: "sk-test", baseURL: `http://127.0.0.1:${port}`, maxRetries: 0 });
});

after(() => new Promise<void>((resolve) => server.close(() => resolve())));

type Params = Anthropic.MessageCreateParamsNonStreaming & { plugins?: unknown; hi_tool_events?: boolean };

function params(events = false): Params {
  return {
    model: context.model,
    max_tokens: 1024,
    messages: [{ role: "user", content: "Draw a red fox." }],
    plugins: [{ id: "image" }],
    ...(events ? { hi_tool_events: true } : {}),
  };
}

const IMAGE_BLOCK = {
  type: "image",
  source: { type: "base64", media_type: "image/png", data: GENERATED_BASE64 },
};
const EXPECTED_CONTENT = [
  { type: "text", text: BEFORE_TEXT },
  IMAGE_BLOCK,
  { type: "text", text: AFTER_TEXT },
];

test("create() and stream().finalMessage(): the text, then the image as an image block, then the text after it", async () => {
  const created = await client.messages.create(params());
  const streamed = await client.messages.stream(params(true) as never).finalMessage();
  for (const message of [created, streamed]) {
    assert.deepEqual(JSON.parse(JSON.stringify(message.content)), EXPECTED_CONTENT);
    const image = message.content[1] as unknown as typeof IMAGE_BLOCK;
    assert.deepEqual(Buffer.from(image.source.data, "base64"), GENERATED_PNG, "the image's bytes, intact");
    assert.equal(message.stop_reason, "end_turn");
  }
  assert.deepEqual(messagesResponseSchema.parse(created), JSON.parse(JSON.stringify(created)));
});

test("raw stream: the image block comes whole in content_block_start, then stop; hi.tool_event frames never inside it", async () => {
  const stream = await client.messages.create({ ...params(true), stream: true });
  const events: Array<{
    type: string;
    index?: number;
    content_block?: unknown;
    phase?: string;
    output?: unknown;
  }> = [];
  for await (const event of stream) events.push(event as never);
  const shown = events.map((event) =>
    event.type === "hi.tool_event"
      ? `event ${event.phase}`
      : event.type === "content_block_start"
        ? `start ${event.index} ${(event.content_block as { type: string }).type}`
        : event.type === "content_block_stop"
          ? `stop ${event.index}`
          : event.type,
  );
  assert.deepEqual(shown, [
    "message_start",
    "start 0 text",
    "content_block_delta",
    "stop 0",
    "event started",
    "event started",
    "start 1 image",
    "stop 1",
    "event completed",
    "event failed",
    "start 2 text",
    "content_block_delta",
    "stop 2",
    "message_delta",
    "message_stop",
  ]);
  assert.deepEqual(
    events.find((event) => event.type === "content_block_start" && event.index === 1)?.content_block,
    IMAGE_BLOCK,
  );
  assert.deepEqual(events.find((event) => event.phase === "completed")?.output, {
    media_type: "image/png",
    size: "40x30",
    bytes: GENERATED_PNG.length,
  });
});

test("replay: the answer sent back as the assistant turn is accepted, its image dropped (count_tokens too)", async () => {
  const previous = await client.messages.create(params());
  const messages: Anthropic.MessageParam[] = [
    { role: "user", content: "Draw a red fox." },
    { role: "assistant", content: JSON.parse(JSON.stringify(previous.content)) },
    { role: "user", content: "Make it blue." },
  ];
  await client.messages.create({ ...params(), messages });
  assert.deepEqual(decoded.at(-1)?.messages[1], {
    role: "assistant",
    content: [
      { type: "text", text: BEFORE_TEXT },
      { type: "text", text: AFTER_TEXT },
    ],
  });
  const withImage = countMessagesTokens({ model: context.model, messages });
  const withoutImage = countMessagesTokens({
    model: context.model,
    messages: [messages[0], { role: "assistant", content: BEFORE_TEXT + AFTER_TEXT }, messages[2]],
  });
  assert.ok(
    Math.abs(withImage.input_tokens - withoutImage.input_tokens) <= 2,
    "the dropped image adds nothing to the count",
  );
});

/**
 * Readers of the request bodies the gateway sent to each provider kind, so matrix cells can check
 * the provider's NATIVE form of what the client asked (tools, output cap, images, structured
 * output, replayed reasoning state) with one assertion per concept instead of one per kind.
 */
import assert from "node:assert/strict";
import type { ProviderKind } from "../../../src/catalog/types.js";
import { UPSTREAM_KEYS, type UpstreamRequest } from "../../helpers/conformance-gateway.js";

// biome-ignore lint/suspicious/noExplicitAny: upstream wire bodies are read field by field.
type Json = any;

export type NativeImage = { kind: "data"; mediaType: string; data: string } | { kind: "url"; url: string };

export interface WireReader {
  /** Checks method, path, auth header, model and the stream switch of one upstream call. */
  checkCall(request: UpstreamRequest, options: { upstreamModel: string; stream: boolean }): void;
  /** The system prompt as one string, or undefined. */
  system(body: Json): string | undefined;
  /** The output cap sent. */
  outputCap(body: Json): number | undefined;
  /** Function tools as `{name, description, parameters}`. */
  tools(body: Json): Array<{ name: string; description?: string; parameters: unknown }>;
  /** Images of the first user turn, in order. */
  images(body: Json): NativeImage[];
  /** Every piece of visible (non-reasoning) text in the conversation turns, system excluded. */
  visibleTexts(body: Json): string[];
  /** Number of conversation turns / items. */
  turnCount(body: Json): number;
}

/** Request fields of the Responses API that Chat Completions does not have. */
const RESPONSES_ONLY_FIELDS = [
  "include",
  "max_tool_calls",
  "truncation",
  "previous_response_id",
  "instructions",
];

function parseDataUrl(url: string): NativeImage {
  const match = /^data:([^;,]+);base64,(.*)$/s.exec(url);
  return match === null ? { kind: "url", url } : { kind: "data", mediaType: match[1], data: match[2] };
}

function textOf(content: Json): string[] {
  if (typeof content === "string") return [content];
  if (!Array.isArray(content)) return [];
  return content.flatMap((part: Json) =>
    typeof part?.text === "string" &&
    (part.type === "text" || part.type === "input_text" || part.type === "output_text")
      ? [part.text]
      : [],
  );
}

const chatReader: WireReader = {
  checkCall(request, { upstreamModel, stream }) {
    assert.equal(request.method, "POST");
    assert.equal(request.path, "/v1/chat/completions");
    assert.equal(request.body.model, upstreamModel);
    assert.equal(request.body.stream, stream ? true : undefined, "upstream stream switch");
    if (stream) assert.deepEqual(request.body.stream_options, { include_usage: true });
    // Chat Completions has no such parameters; OpenAI answers 400 "Unrecognized request argument".
    for (const field of RESPONSES_ONLY_FIELDS) {
      assert.equal(
        request.body[field],
        undefined,
        `Responses-only field "${field}" sent to a Chat Completions upstream`,
      );
    }
  },
  system(body) {
    const message = body.messages.find((m: Json) => m.role === "system" || m.role === "developer");
    return message === undefined ? undefined : textOf(message.content).join("");
  },
  outputCap: (body) => body.max_completion_tokens ?? body.max_tokens,
  tools: (body) =>
    (body.tools ?? []).map((tool: Json) => ({
      name: tool.function.name,
      description: tool.function.description,
      parameters: tool.function.parameters,
    })),
  images(body) {
    const user = body.messages.find((m: Json) => m.role === "user");
    return (Array.isArray(user?.content) ? user.content : [])
      .filter((part: Json) => part.type === "image_url")
      .map((part: Json) => parseDataUrl(part.image_url.url));
  },
  visibleTexts: (body) =>
    body.messages
      .filter((m: Json) => m.role !== "system" && m.role !== "developer")
      .flatMap((m: Json) => textOf(m.content)),
  turnCount: (body) => body.messages.length,
};

const responsesReader: WireReader = {
  checkCall(request, { upstreamModel, stream }) {
    assert.equal(request.method, "POST");
    assert.equal(request.path, "/v1/responses");
    assert.equal(request.body.model, upstreamModel);
    assert.equal(request.body.stream, stream ? true : undefined, "upstream stream switch");
    assert.equal(request.body.store, false, "stateless upstream calls");
  },
  system: (body) => body.instructions,
  outputCap: (body) => body.max_output_tokens,
  tools: (body) =>
    (body.tools ?? []).map((tool: Json) => ({
      name: tool.name,
      description: tool.description,
      parameters: tool.parameters,
    })),
  images(body) {
    const user = body.input.find((item: Json) => item.role === "user");
    return (Array.isArray(user?.content) ? user.content : [])
      .filter((part: Json) => part.type === "input_image")
      .map((part: Json) => parseDataUrl(part.image_url));
  },
  visibleTexts: (body) =>
    body.input
      .filter((item: Json) => item.type === "message" || (item.type === undefined && item.role !== undefined))
      .filter((item: Json) => item.role !== "system" && item.role !== "developer")
      .flatMap((item: Json) => textOf(item.content)),
  turnCount: (body) => body.input.length,
};

const anthropicReader: WireReader = {
  checkCall(request, { upstreamModel, stream }) {
    assert.equal(request.method, "POST");
    assert.equal(request.path, "/v1/messages");
    assert.equal(request.body.model, upstreamModel);
    assert.equal(request.body.stream, stream ? true : undefined, "upstream stream switch");
    assert.equal(request.headers["anthropic-version"], "2023-06-01");
  },
  system(body) {
    if (body.system === undefined) return undefined;
    return typeof body.system === "string" ? body.system : textOf(body.system).join("");
  },
  outputCap: (body) => body.max_tokens,
  tools: (body) =>
    (body.tools ?? []).map((tool: Json) => ({
      name: tool.name,
      description: tool.description,
      parameters: tool.input_schema,
    })),
  images(body) {
    const user = body.messages.find((m: Json) => m.role === "user");
    return (Array.isArray(user?.content) ? user.content : [])
      .filter((block: Json) => block.type === "image")
      .map(
        (block: Json): NativeImage =>
          block.source.type === "base64"
            ? { kind: "data", mediaType: block.source.media_type, data: block.source.data }
            : { kind: "url", url: block.source.url },
      );
  },
  visibleTexts: (body) => body.messages.flatMap((m: Json) => textOf(m.content)),
  turnCount: (body) => body.messages.length,
};

const googleReader: WireReader = {
  checkCall(request, { upstreamModel, stream }) {
    assert.equal(request.method, "POST");
    assert.equal(
      request.path,
      `/v1beta/models/${upstreamModel}:${stream ? "streamGenerateContent?alt=sse" : "generateContent"}`,
    );
    assert.equal(request.body.model, undefined, "Gemini takes the model in the path");
  },
  system: (body) =>
    body.systemInstruction === undefined
      ? undefined
      : body.systemInstruction.parts.map((part: Json) => part.text).join(""),
  outputCap: (body) => body.generationConfig?.maxOutputTokens,
  tools: (body) =>
    (body.tools ?? []).flatMap((tool: Json) =>
      (tool.functionDeclarations ?? []).map((declaration: Json) => ({
        name: declaration.name,
        description: declaration.description,
        parameters: declaration.parameters ?? declaration.parametersJsonSchema,
      })),
    ),
  images(body) {
    const user = body.contents.find((c: Json) => c.role === "user");
    return (user?.parts ?? []).flatMap((part: Json): NativeImage[] => {
      if (part.inlineData)
        return [{ kind: "data", mediaType: part.inlineData.mimeType, data: part.inlineData.data }];
      if (part.fileData) return [{ kind: "url", url: part.fileData.fileUri }];
      return [];
    });
  },
  visibleTexts: (body) =>
    body.contents.flatMap((c: Json) =>
      (c.parts ?? [])
        .filter((part: Json) => typeof part.text === "string" && part.thought !== true)
        .map((part: Json) => part.text),
    ),
  turnCount: (body) => body.contents.length,
};

export const WIRE_READERS: Record<ProviderKind, WireReader> = {
  "openai-compatible": chatReader,
  "openai-chat": chatReader,
  "openai-responses": responsesReader,
  anthropic: anthropicReader,
  google: googleReader,
};

/** The credential each provider kind must receive, in its own header. */
export function checkUpstreamAuth(kind: ProviderKind, request: UpstreamRequest): void {
  const key = UPSTREAM_KEYS[kind];
  switch (kind) {
    case "anthropic":
      assert.equal(request.headers["x-api-key"], key);
      assert.equal(request.headers.authorization, undefined, "no caller credentials upstream");
      return;
    case "google":
      assert.equal(request.headers["x-goog-api-key"], key);
      assert.equal(request.headers.authorization, undefined, "no caller credentials upstream");
      return;
    default:
      assert.equal(request.headers.authorization, `Bearer ${key}`);
  }
}

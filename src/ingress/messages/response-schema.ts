/**
 * The messages response, stream events and count-tokens response as zod schemas,
 * for /openapi.json only: the encoders build these objects directly and tests check their shape.
 */
import { z } from "zod";
import { WEB_FETCH_ERROR_CODES, WEB_SEARCH_ERROR_CODES } from "./map-server-tool-error-code.js";
import { MESSAGES_STOP_REASONS } from "./map-stop-reason.js";

function uniqueValues(table: Readonly<Record<string, string>>): [string, ...string[]] {
  return [...new Set(Object.values(table))] as [string, ...string[]];
}

const stopReasonSchema = z.enum(uniqueValues(MESSAGES_STOP_REASONS));

export const messagesUsageSchema = z
  .object({
    input_tokens: z.number().int().meta({ description: "prompt tokens not read from or written to cache" }),
    output_tokens: z.number().int().meta({ description: "generated tokens, thinking included" }),
    cache_read_input_tokens: z.number().int(),
    cache_creation_input_tokens: z.number().int(),
    server_tool_use: z
      .object({
        web_search_requests: z.number().int(),
        web_fetch_requests: z.number().int(),
      })
      .optional()
      .meta({
        description:
          "server-tool calls the gateway ran (failed ones included); present when the request activated a server tool",
      }),
  })
  .meta({ id: "MessagesUsage" });

const citationSchema = z
  .object({
    type: z.literal("web_search_result_location"),
    url: z.string(),
    title: z.string(),
    cited_text: z.string().meta({ description: "the source's text the cited part of the block rests on" }),
    encrypted_index: z.string().meta({ description: "opaque; ignored when sent back" }),
  })
  .meta({ id: "MessagesWebSearchCitation" });

const opaqueField = z.string().min(1).meta({ description: "opaque; ignored when sent back" });

const webSearchResultContentSchema = z.union([
  z.array(
    z.object({
      type: z.literal("web_search_result"),
      url: z.string(),
      title: z.string(),
      encrypted_content: opaqueField,
      page_age: z.string().nullable(),
    }),
  ),
  z.object({
    type: z.literal("web_search_tool_result_error"),
    error_code: z.enum(uniqueValues(WEB_SEARCH_ERROR_CODES)),
  }),
]);

const webFetchResultContentSchema = z.discriminatedUnion("type", [
  z.object({
    type: z.literal("web_fetch_result"),
    url: z.string().meta({ description: "the URL read, after redirects" }),
    retrieved_at: z.string().meta({ description: "ISO 8601 UTC" }),
    content: z.object({
      type: z.literal("document"),
      title: z.string().nullable(),
      source: z.object({
        type: z.literal("text"),
        media_type: z.literal("text/plain"),
        data: z.string().meta({ description: "the page's text as the model read it" }),
      }),
    }),
  }),
  z.object({
    type: z.literal("web_fetch_tool_result_error"),
    error_code: z.enum(uniqueValues(WEB_FETCH_ERROR_CODES)),
  }),
]);

const contentBlockSchema = z
  .discriminatedUnion("type", [
    z.object({
      type: z.literal("text"),
      text: z.string(),
      citations: z
        .array(citationSchema)
        .optional()
        .meta({ description: "sources this text cites (server web_search / web_fetch); absent when none" }),
    }),
    z.object({
      type: z.literal("thinking"),
      thinking: z.string(),
      signature: z
        .string()
        .meta({ description: "opaque; send back unchanged. Empty when there is no state" }),
    }),
    z.object({
      type: z.literal("redacted_thinking"),
      data: z.string().meta({ description: "opaque; send back unchanged" }),
    }),
    z.object({
      type: z.literal("tool_use"),
      id: z.string(),
      name: z.string(),
      input: z.record(z.string(), z.unknown()),
    }),
    z
      .object({
        type: z.literal("server_tool_use"),
        id: z.string().meta({ description: "`srvtoolu_<call id>`" }),
        name: z.enum(["web_search", "web_fetch"]),
        input: z.record(z.string(), z.unknown()),
      })
      .meta({
        description:
          "a server tool the gateway ran for the model; datetime, pdf and image calls have no block",
      }),
    z.object({
      type: z.literal("web_search_tool_result"),
      tool_use_id: z.string(),
      content: webSearchResultContentSchema,
    }),
    z.object({
      type: z.literal("web_fetch_tool_result"),
      tool_use_id: z.string(),
      content: webFetchResultContentSchema,
    }),
    z
      .object({
        type: z.literal("image"),
        source: z.object({
          type: z.literal("base64"),
          media_type: z
            .string()
            .meta({ description: "`image/png`, `image/jpeg`, `image/webp` or `image/gif`" }),
          data: z.string(),
        }),
      })
      .meta({ description: "an image the image server tool made; accepted and dropped when replayed" }),
  ])
  .meta({ id: "MessagesResponseContentBlock" });

export const messagesResponseSchema = z
  .object({
    id: z.string().meta({ description: "`msg_<request id>`" }),
    type: z.literal("message"),
    role: z.literal("assistant"),
    model: z.string(),
    content: z.array(contentBlockSchema).meta({
      description:
        "in generation order: thinking, text, tool_use; server-tool calls and results where they ran",
    }),
    stop_reason: stopReasonSchema,
    stop_sequence: z.string().nullable(),
    usage: messagesUsageSchema,
  })
  .meta({ id: "MessagesResponse" });

const deltaSchema = z.discriminatedUnion("type", [
  z.object({ type: z.literal("text_delta"), text: z.string() }),
  z.object({ type: z.literal("thinking_delta"), thinking: z.string() }),
  z.object({ type: z.literal("signature_delta"), signature: z.string() }),
  z.object({ type: z.literal("input_json_delta"), partial_json: z.string() }),
  z.object({ type: z.literal("citations_delta"), citation: citationSchema }),
]);

const toolEventPhaseSchema = z.enum(["started", "completed", "failed"]);

/** One `data:` payload of the stream; the SSE `event:` line always equals its `type`. */
export const messagesStreamEventSchema = z
  .discriminatedUnion("type", [
    z.object({
      type: z.literal("message_start"),
      message: messagesResponseSchema.extend({
        content: z.array(contentBlockSchema).max(0),
        stop_reason: z.null(),
        stop_sequence: z.null(),
      }),
    }),
    z.object({
      type: z.literal("content_block_start"),
      index: z.number().int(),
      content_block: contentBlockSchema,
    }),
    z.object({ type: z.literal("content_block_delta"), index: z.number().int(), delta: deltaSchema }),
    z.object({ type: z.literal("content_block_stop"), index: z.number().int() }),
    z.object({
      type: z.literal("message_delta"),
      delta: z.object({ stop_reason: stopReasonSchema, stop_sequence: z.string().nullable() }),
      usage: messagesUsageSchema.meta({ description: "cumulative totals of the whole message" }),
    }),
    z.object({ type: z.literal("message_stop") }),
    z.object({ type: z.literal("ping") }),
    z
      .object({
        type: z.literal("hi.tool_event"),
        tool: z.string(),
        phase: toolEventPhaseSchema,
        call_id: z.string().meta({
          description: "the `server_tool_use` block's id; the bare call id for tools without a block",
        }),
        input: z.record(z.string(), z.unknown()),
        output: z
          .record(z.string(), z.unknown())
          .optional()
          .meta({ description: "a summary, once completed" }),
        error: z.object({ code: z.string(), message: z.string() }).optional(),
        cost_micro_usd: z.number().int().optional(),
        duration_ms: z.number().optional(),
      })
      .meta({
        description:
          "progress of a server tool, only when the tool's `events` or `hi_tool_events` asked for it; never inside a block",
      }),
  ])
  .meta({ id: "MessagesStreamEvent" });

export const messagesCountTokensResponseSchema = z
  .object({
    input_tokens: z
      .number()
      .int()
      .meta({ description: "local estimate of the prompt: system, messages, tools and media" }),
  })
  .meta({ id: "MessagesCountTokensResponse" });

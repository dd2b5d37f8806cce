/**
 * The messages response, stream events and count-tokens response as zod schemas,
 * for /openapi.json only: the encoders build these objects directly and tests check their shape.
 */
import { z } from "zod";
import { MESSAGES_STOP_REASONS } from "./map-stop-reason.js";

const stopReasonSchema = z.enum([...new Set(Object.values(MESSAGES_STOP_REASONS))] as [string, ...string[]]);

export const messagesUsageSchema = z
  .object({
    input_tokens: z.number().int().meta({ description: "prompt tokens not read from or written to cache" }),
    output_tokens: z.number().int().meta({ description: "generated tokens, thinking included" }),
    cache_read_input_tokens: z.number().int(),
    cache_creation_input_tokens: z.number().int(),
  })
  .meta({ id: "MessagesUsage" });

const contentBlockSchema = z
  .discriminatedUnion("type", [
    z.object({ type: z.literal("text"), text: z.string() }),
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
  ])
  .meta({ id: "MessagesResponseContentBlock" });

export const messagesResponseSchema = z
  .object({
    id: z.string().meta({ description: "`msg_<request id>`" }),
    type: z.literal("message"),
    role: z.literal("assistant"),
    model: z.string(),
    content: z
      .array(contentBlockSchema)
      .meta({ description: "in generation order: thinking, text, tool_use" }),
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
]);

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

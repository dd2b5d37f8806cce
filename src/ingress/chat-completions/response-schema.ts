/**
 * The chat-completions response and stream chunk as zod schemas, for
 * /openapi.json only: the encoders build these objects directly and tests check their shape.
 */
import { z } from "zod";
import { reasoningDetailSchema } from "./reasoning-details.js";

const finishReasonSchema = z.enum(["stop", "length", "tool_calls", "content_filter"]);

const toolCallSchema = z.object({
  id: z.string(),
  type: z.literal("function"),
  function: z.object({ name: z.string(), arguments: z.string() }),
});

const urlCitationAnnotationSchema = z
  .object({
    type: z.literal("url_citation"),
    url_citation: z.object({
      url: z.string(),
      title: z.string(),
      start_index: z.number().int().meta({ description: "UTF-16 offset into the message's content" }),
      end_index: z.number().int().meta({ description: "exclusive" }),
    }),
  })
  .meta({
    id: "ChatUrlCitationAnnotation",
    description: "a span of the answer citing a server tool's source",
  });

const annotationsSchema = z
  .array(urlCitationAnnotationSchema)
  .optional()
  .meta({ description: "present only when the answer cites a source" });

const imagesSchema = z
  .array(
    z
      .object({ type: z.literal("image_url"), image_url: z.object({ url: z.string() }) })
      .meta({ id: "ChatGeneratedImage", description: "an image the image server tool made, as a data URL" }),
  )
  .optional()
  .meta({ description: "present only when the image server tool made images" });

/** The payload of a `hi.tool_event` frame (the same in every format). */
const toolEventPayloadSchema = z.object({
  tool: z.string(),
  phase: z.enum(["started", "completed", "failed"]),
  call_id: z.string(),
  input: z.record(z.string(), z.unknown()),
  output: z.record(z.string(), z.unknown()).optional().meta({ description: "a summary, once completed" }),
  error: z.object({ code: z.string(), message: z.string() }).optional(),
  cost_micro_usd: z.number().int().optional(),
  duration_ms: z.number().optional(),
});

export const chatCompletionUsageSchema = z
  .object({
    prompt_tokens: z.number().int(),
    completion_tokens: z.number().int(),
    total_tokens: z.number().int(),
    prompt_tokens_details: z.object({
      cached_tokens: z.number().int(),
      cache_write_tokens: z.number().int().optional().meta({ description: "omitted when 0" }),
      audio_tokens: z.number().int().optional().meta({ description: "omitted when 0" }),
    }),
    completion_tokens_details: z.object({
      reasoning_tokens: z.number().int(),
      audio_tokens: z.number().int().optional(),
      accepted_prediction_tokens: z.number().int().optional(),
      rejected_prediction_tokens: z.number().int().optional(),
    }),
    cost: z.number().meta({ description: "total cost in credits (USD)" }),
  })
  .meta({ id: "ChatCompletionUsage" });

export const chatCompletionResponseSchema = z
  .object({
    id: z.string().meta({ description: "`gen-<request id>`" }),
    object: z.literal("chat.completion"),
    created: z.number().int().meta({ description: "Unix seconds" }),
    model: z.string(),
    system_fingerprint: z.null().meta({ description: "always null: no upstream fingerprint is carried" }),
    choices: z.array(
      z.object({
        index: z.number().int(),
        message: z.object({
          role: z.literal("assistant"),
          content: z.string().nullable(),
          refusal: z.null(),
          reasoning: z.string().optional(),
          reasoning_details: z.array(reasoningDetailSchema).optional(),
          tool_calls: z.array(toolCallSchema).optional(),
          annotations: annotationsSchema,
          images: imagesSchema,
        }),
        finish_reason: finishReasonSchema,
        logprobs: z.null(),
      }),
    ),
    usage: chatCompletionUsageSchema,
  })
  .meta({ id: "ChatCompletion" });

export const chatCompletionChunkSchema = z
  .object({
    id: z.string(),
    object: z.literal("chat.completion.chunk"),
    created: z.number().int(),
    model: z.string(),
    choices: z.array(
      z.object({
        index: z.number().int(),
        delta: z.object({
          role: z.literal("assistant").optional(),
          content: z.string().nullable().optional(),
          reasoning: z.string().optional(),
          reasoning_details: z.array(reasoningDetailSchema).optional(),
          tool_calls: z
            .array(
              z.object({
                index: z.number().int(),
                id: z.string().optional(),
                type: z.literal("function").optional(),
                function: z.object({ name: z.string().optional(), arguments: z.string() }),
              }),
            )
            .optional(),
          annotations: annotationsSchema.meta({
            description: "the whole array, once, in the chunk before the finish reason",
          }),
          images: imagesSchema.meta({
            description: "the whole array, once, before the finish reason (or before an error)",
          }),
        }),
        finish_reason: finishReasonSchema.nullable(),
        logprobs: z.null(),
      }),
    ),
    usage: chatCompletionUsageSchema
      .optional()
      .meta({ description: "only on the last chunk, whose choices are empty" }),
    hi_tool_event: toolEventPayloadSchema.optional().meta({
      description: "only on `event: hi.tool_event` frames, whose choices are empty",
    }),
  })
  .meta({ id: "ChatCompletionChunk" });

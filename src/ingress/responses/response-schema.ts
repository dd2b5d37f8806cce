/**
 * The responses response object as a zod schema, for /openapi.json only: the encoders
 * build these objects directly (create-response-object.ts, encode-output-items.ts) and tests check
 * them against this schema and OpenAI's published `Response` schema.
 */
import { z } from "zod";
import { REASONING_EFFORTS } from "../shared/reasoning-efforts.js";

const urlCitationSchema = z
  .object({
    type: z.literal("url_citation"),
    url: z.string(),
    title: z.string(),
    start_index: z.number().int().meta({ description: "UTF-16 code units into `text`" }),
    end_index: z.number().int().meta({ description: "exclusive" }),
  })
  .meta({
    id: "ResponsesUrlCitation",
    description: "a span of the text citing a source a server tool found",
  });

const outputTextSchema = z
  .object({
    type: z.literal("output_text"),
    text: z.string(),
    annotations: z.array(urlCitationSchema),
    logprobs: z.array(z.unknown()),
  })
  .meta({ id: "ResponsesOutputText" });

const reasoningOutputSchema = z
  .object({
    id: z.string().meta({ description: "`rs_<request id>_<output index>`" }),
    type: z.literal("reasoning"),
    summary: z.array(z.object({ type: z.literal("summary_text"), text: z.string() })),
    encrypted_content: z
      .string()
      .optional()
      .meta({ description: "opaque reasoning state; send the item back unchanged in the next input" }),
  })
  .meta({ id: "ResponsesReasoningOutput" });

const messageOutputSchema = z
  .object({
    id: z.string().meta({ description: "`msg_<request id>_<output index>`" }),
    type: z.literal("message"),
    status: z
      .enum(["in_progress", "completed", "incomplete"])
      .meta({ description: "`incomplete` when the response is (the cap or a filter cut this message)" }),
    role: z.literal("assistant"),
    content: z.array(outputTextSchema),
  })
  .meta({ id: "ResponsesMessageOutput" });

const functionCallOutputSchema = z
  .object({
    id: z.string().meta({ description: "`fc_<request id>_<output index>`" }),
    type: z.literal("function_call"),
    status: z.enum(["in_progress", "completed"]),
    call_id: z.string(),
    name: z.string(),
    arguments: z.string().meta({ description: "JSON-encoded arguments" }),
    namespace: z.string().optional().meta({
      description: "the tool group of the called function, when an OpenAI Responses route named one",
    }),
  })
  .meta({ id: "ResponsesFunctionCallOutput" });

const customToolCallOutputSchema = z
  .object({
    id: z.string().meta({ description: "`ctc_<request id>_<output index>`" }),
    type: z.literal("custom_tool_call"),
    status: z.enum(["in_progress", "completed"]),
    call_id: z.string(),
    name: z.string(),
    input: z.string().meta({ description: "the freeform input text" }),
    namespace: z.string().optional(),
  })
  .meta({
    id: "ResponsesCustomToolCallOutput",
    description: "a call of a `custom` tool the request passed to an OpenAI Responses route",
  });

const webSearchCallOutputSchema = z
  .object({
    id: z
      .string()
      .meta({ description: "`ws_<call id>`, followed by a seal unless the request set `store: false`" }),
    type: z.literal("web_search_call"),
    status: z.enum(["in_progress", "completed", "failed"]),
    action: z
      .discriminatedUnion("type", [
        z.object({
          type: z.literal("search"),
          query: z.string(),
          queries: z.array(z.string()),
          sources: z.array(z.object({ type: z.literal("url"), url: z.string() })),
        }),
        z.object({
          type: z.literal("open_page"),
          url: z.string().nullable().meta({ description: "the page web_fetch read" }),
        }),
      ])
      .optional()
      .meta({ description: "absent only while in progress (stream events)" }),
  })
  .meta({
    id: "ResponsesWebSearchCallOutput",
    description: "a web_search (`search` action) or web_fetch (`open_page` action) call the gateway ran",
  });

const imageGenerationCallOutputSchema = z
  .object({
    id: z
      .string()
      .meta({ description: "`ig_<call id>`, followed by a seal unless the request set `store: false`" }),
    type: z.literal("image_generation_call"),
    status: z.enum(["in_progress", "completed", "failed"]),
    result: z
      .string()
      .nullable()
      .optional()
      .meta({ description: "the image, base64; null when it failed; absent only while in progress" }),
    revised_prompt: z.string().optional().meta({ description: "the prompt as the provider rewrote it" }),
    size: z.string().optional().meta({ description: "`<width>x<height>`" }),
    output_format: z.string().optional().meta({ description: "`png`, `jpeg` or `webp`" }),
  })
  .meta({ id: "ResponsesImageGenerationCallOutput", description: "an image the gateway's image tool made" });

export const responsesOutputItemSchema = z
  .discriminatedUnion("type", [
    reasoningOutputSchema,
    messageOutputSchema,
    functionCallOutputSchema,
    customToolCallOutputSchema,
    webSearchCallOutputSchema,
    imageGenerationCallOutputSchema,
  ])
  .meta({ id: "ResponsesOutputItem" });

export const responsesUsageSchema = z
  .object({
    input_tokens: z.number().int(),
    input_tokens_details: z.object({
      cached_tokens: z.number().int(),
      cache_write_tokens: z.number().int(),
      audio_tokens: z.number().int().optional().meta({ description: "omitted when 0" }),
    }),
    output_tokens: z.number().int(),
    output_tokens_details: z.object({
      reasoning_tokens: z.number().int(),
      audio_tokens: z.number().int().optional().meta({ description: "omitted when 0" }),
    }),
    total_tokens: z.number().int(),
    cost: z.number().meta({ description: "total cost in credits (USD)" }),
  })
  .meta({ id: "ResponsesUsage" });

const textFormatSchema = z.discriminatedUnion("type", [
  z.object({ type: z.literal("text") }),
  z.object({ type: z.literal("json_object") }),
  z.object({
    type: z.literal("json_schema"),
    name: z.string(),
    schema: z.record(z.string(), z.unknown()),
    strict: z.boolean().optional(),
    description: z.string().optional(),
  }),
]);

export const responsesResponseSchema = z
  .object({
    id: z.string().meta({ description: "`resp_<request id>`" }),
    object: z.literal("response"),
    created_at: z.number().int().meta({ description: "Unix seconds" }),
    status: z.enum(["completed", "incomplete", "in_progress", "failed"]).meta({
      description: "`completed` or `incomplete` in a response body; stream events also carry the others",
    }),
    completed_at: z.number().int().nullable(),
    error: z.object({ code: z.string(), message: z.string() }).nullable(),
    incomplete_details: z.object({ reason: z.enum(["max_output_tokens", "content_filter"]) }).nullable(),
    instructions: z.string().nullable(),
    max_output_tokens: z.number().int().nullable(),
    model: z.string(),
    output: z.array(responsesOutputItemSchema).meta({
      description:
        "in generation order: reasoning item(s), a message item, one function_call item per call; " +
        "server-tool calls as web_search_call or image_generation_call items where the model made them",
    }),
    parallel_tool_calls: z.boolean(),
    previous_response_id: z.null(),
    reasoning: z.object({ effort: z.enum(REASONING_EFFORTS).nullable(), summary: z.null() }),
    store: z.literal(false),
    temperature: z.number().nullable(),
    text: z.object({ format: textFormatSchema, verbosity: z.string().optional() }),
    tool_choice: z.union([
      z.enum(["auto", "none", "required"]),
      z.object({ type: z.literal("function"), name: z.string() }),
    ]),
    tools: z.array(
      z.object({
        type: z.literal("function"),
        name: z.string(),
        description: z.string().nullable(),
        parameters: z.record(z.string(), z.unknown()).nullable(),
        strict: z.boolean().nullable(),
      }),
    ),
    top_p: z.number().nullable(),
    frequency_penalty: z.number().nullable(),
    presence_penalty: z.number().nullable(),
    truncation: z.literal("disabled"),
    usage: responsesUsageSchema.nullable().meta({ description: "null only in in-progress stream events" }),
    user: z.string().optional(),
    metadata: z.record(z.string(), z.unknown()),
  })
  .meta({ id: "ResponsesResponse" });

/**
 * Items of the responses request's `input` array as zod schemas.
 *
 * - Objects are loose: clients replay output items verbatim, with `id`, `status`, `phase`,
 *   `annotations` and `logprobs` that the gateway does not need.
 * - A message's `type` is optional (OpenAI's "easy" input message is just `{role, content}`).
 * - Content parts are one discriminated union for every role; which part may appear under which role
 *   is checked in decode-content-parts.ts, where the error can say why.
 * - `item_reference` resolves only to an item the gateway sealed into the id (item-seal.ts); the
 *   decoder refuses any other with a message saying why.
 * - A `web_search_call` or `image_generation_call` (a server tool's call in an earlier response) is
 *   accepted in any shape and dropped by the decoder: the answer that followed it already says what
 *   the tool found or made.
 */
import { z } from "zod";

const inputTextPartSchema = z
  .object({ type: z.literal("input_text"), text: z.string() })
  .loose()
  .meta({ id: "ResponsesInputText" });

const outputTextPartSchema = z
  .object({ type: z.literal("output_text"), text: z.string() })
  .loose()
  .meta({ id: "ResponsesOutputTextInput", description: "only in assistant messages" });

const refusalPartSchema = z
  .object({ type: z.literal("refusal"), refusal: z.string() })
  .loose()
  .meta({ id: "ResponsesRefusalInput", description: "only in assistant messages; replayed as text" });

const inputImagePartSchema = z
  .object({
    type: z.literal("input_image"),
    image_url: z.string().meta({ description: "http(s) URL or `data:<mime>;base64,<data>` URL" }),
    detail: z
      .enum(["low", "high", "auto", "original"])
      .nullish()
      .meta({ description: "`original` is treated as `high`" }),
    file_id: z.string().nullish().meta({ description: "not supported; use image_url" }),
  })
  .loose()
  .meta({ id: "ResponsesInputImage" });

const inputFilePartSchema = z
  .object({
    type: z.literal("input_file"),
    filename: z.string().nullish(),
    file_data: z.string().nullish().meta({ description: "`data:<mime>;base64,<data>` URL" }),
    file_url: z.string().nullish().meta({ description: "fetchable http(s) URL" }),
    file_id: z.string().nullish().meta({ description: "not supported; use file_data or file_url" }),
  })
  .loose()
  .meta({ id: "ResponsesInputFile" });

const contentPartSchema = z
  .discriminatedUnion("type", [
    inputTextPartSchema,
    outputTextPartSchema,
    refusalPartSchema,
    inputImagePartSchema,
    inputFilePartSchema,
  ])
  .meta({ id: "ResponsesContentPart" });

const messageItemSchema = z
  .object({
    type: z.literal("message").optional(),
    role: z.enum(["system", "developer", "user", "assistant"]),
    content: z.union([z.string(), z.array(contentPartSchema)], {
      error: "must be a string or an array of content parts",
    }),
  })
  .loose()
  .meta({ id: "ResponsesMessageItem", description: "`developer` is treated as `system`" });

const functionCallItemSchema = z
  .object({
    type: z.literal("function_call"),
    call_id: z.string(),
    name: z.string(),
    arguments: z.string().meta({ description: "JSON-encoded arguments, kept byte-exact" }),
    id: z.string().nullish(),
  })
  .loose()
  .meta({ id: "ResponsesFunctionCallItem" });

/** `output` is documented as a string; the text and image parts OpenAI also accepts work too. */
const functionCallOutputItemSchema = z
  .object({
    type: z.literal("function_call_output"),
    call_id: z.string(),
    output: z.union(
      [z.string(), z.array(z.discriminatedUnion("type", [inputTextPartSchema, inputImagePartSchema]))],
      { error: "must be a string or an array of input_text and input_image parts" },
    ),
  })
  .loose()
  .meta({ id: "ResponsesFunctionCallOutputItem" });

const reasoningItemSchema = z
  .object({
    type: z.literal("reasoning"),
    id: z.string().nullish(),
    summary: z.array(z.object({ type: z.literal("summary_text"), text: z.string() }).loose()).default([]),
    encrypted_content: z
      .string()
      .nullish()
      .meta({ description: "opaque reasoning state, sent back exactly as received" }),
    content: z
      .array(z.object({ type: z.literal("reasoning_text"), text: z.string() }).loose())
      .nullish()
      .meta({ description: "raw reasoning text; used when summary is empty" }),
  })
  .loose()
  .meta({ id: "ResponsesReasoningItem" });

const webSearchCallItemSchema = z
  .object({ type: z.literal("web_search_call"), id: z.string().nullish() })
  .loose()
  .meta({
    id: "ResponsesWebSearchCallInput",
    description: "a server tool's call replayed from an earlier response; accepted and not sent to the model",
  });

const imageGenerationCallItemSchema = z
  .object({ type: z.literal("image_generation_call"), id: z.string().nullish() })
  .loose()
  .meta({
    id: "ResponsesImageGenerationCallInput",
    description: "an image made in an earlier response, replayed; accepted and not sent to the model",
  });

const itemReferenceSchema = z
  .object({ type: z.literal("item_reference"), id: z.string() })
  .loose()
  .meta({
    id: "ResponsesItemReference",
    description:
      "a reasoning, message, web_search_call or image_generation_call item of an earlier gateway " +
      "response, by its id (which carries the item; a server tool's call is then dropped like the item " +
      "itself); " +
      "other ids are refused: the gateway keeps no state",
  });

/** The item types this schema defines; any other typed item is carried verbatim (below). */
export const KNOWN_INPUT_ITEM_TYPES: ReadonlySet<string> = new Set([
  "message",
  "function_call",
  "function_call_output",
  "reasoning",
  "web_search_call",
  "image_generation_call",
  "item_reference",
]);

/**
 * An item of a type the gateway does not know (`custom_tool_call` and its output, `compaction`,
 * `mcp_call`, a newer item): sent as it is to OpenAI Responses upstreams, in its place, and left
 * out elsewhere with the drop report. The check aborts, so a malformed item of a known type still
 * gets that type's own error.
 */
const verbatimItemSchema = z
  .object({
    type: z
      .string()
      .refine((type) => !KNOWN_INPUT_ITEM_TYPES.has(type), { error: "is a known item type", abort: true }),
  })
  .loose()
  .meta({
    id: "ResponsesOtherInputItem",
    description:
      "an item of another type: sent as it is to OpenAI Responses routes, left out elsewhere (reported in X-Hi-Dropped)",
  });

export const inputItemSchema = z
  .union(
    [
      messageItemSchema,
      functionCallItemSchema,
      functionCallOutputItemSchema,
      reasoningItemSchema,
      webSearchCallItemSchema,
      imageGenerationCallItemSchema,
      itemReferenceSchema,
      verbatimItemSchema,
    ],
    {
      error:
        "must be a message, function_call, function_call_output, reasoning, web_search_call, " +
        "image_generation_call or item_reference item, or an item of a type the gateway does not define",
    },
  )
  .meta({ id: "ResponsesInputItem" });

/** An input item of a type the schema defines (the decoder sets the others apart first). */
export type ResponsesInputItemBody =
  | z.infer<typeof messageItemSchema>
  | z.infer<typeof functionCallItemSchema>
  | z.infer<typeof functionCallOutputItemSchema>
  | z.infer<typeof reasoningItemSchema>
  | z.infer<typeof webSearchCallItemSchema>
  | z.infer<typeof imageGenerationCallItemSchema>
  | z.infer<typeof itemReferenceSchema>;
export type ResponsesOtherItemBody = z.infer<typeof verbatimItemSchema>;
export type ResponsesMessageItemBody = z.infer<typeof messageItemSchema>;
export type ResponsesReasoningItemBody = z.infer<typeof reasoningItemSchema>;
export type ResponsesFunctionCallOutputItemBody = z.infer<typeof functionCallOutputItemSchema>;
export type ResponsesContentPartBody = z.infer<typeof contentPartSchema>;

/**
 * The chat-completions request body as a zod schema. It validates requests and, through
 * the `.meta({ id })` names, documents them in /openapi.json.
 *
 * Conventions:
 * - Wire names stay snake_case here; `decode-request.ts` turns them into canonical camelCase.
 * - Objects are loose: the top level must be (unknown fields are forwarded upstream) and nested
 *   objects are too, because SDKs and vendors add fields (`refusal`, `annotations`, `cache_control`).
 * - Optional top-level and message fields also accept `null` and treat it as absent: many clients
 *   serialise unset options as `null`, and OpenAI accepts that.
 * - Custom `error` strings are predicates ("must be …"); `describe-validation-issue.ts` prefixes them
 *   with the parameter name.
 */

import { z } from "zod";
import { fallbackModelsSchema } from "../shared/fallback-models.js";
import { REASONING_EFFORTS } from "../shared/reasoning-efforts.js";
import { cacheFieldSchema } from "../shared/response-cache-option.js";
import { SERVER_TOOL_IDS } from "../shared/server-tool-activations.js";
import { createVerbatimSchema, strictFieldSchema } from "../shared/wire-extras.js";
import { reasoningDetailSchema } from "./reasoning-details.js";

/** The efforts /openapi.json advertises; the others (REASONING_EFFORTS) are accepted but not listed. */
const DOCUMENTED_REASONING_EFFORTS = ["low", "medium", "high"];

/** `<vendor>:<tool>`, e.g. `hi:web_search`, `openrouter:web_fetch`. */
const SERVER_TOOL_TYPE_PATTERN = new RegExp(`^[^:\\s]+:(${SERVER_TOOL_IDS.join("|")})$`);

/**
 * Beyond OpenAI's request format: OpenRouter-style prompt-cache breakpoints on content parts, which
 * clients use
 * for Anthropic prompt caching through chat completions; the canonical parts carry them.
 */
const cacheControlSchema = z
  .object({ type: z.literal("ephemeral"), ttl: z.string().optional() })
  .loose()
  .optional()
  .meta({ description: "prompt-cache breakpoint (honoured by upstreams that support it)" });

const textPartSchema = z
  .object({ type: z.literal("text"), text: z.string(), cache_control: cacheControlSchema })
  .loose()
  .meta({ id: "ChatTextContentPart" });

const imageUrlPartSchema = z
  .object({
    type: z.literal("image_url"),
    image_url: z
      .object({
        url: z.string().meta({ description: "http(s) URL or `data:<mime>;base64,<data>` URL" }),
        detail: z.enum(["low", "high", "auto"]).optional(),
      })
      .loose(),
    cache_control: cacheControlSchema,
  })
  .loose()
  .meta({ id: "ChatImageContentPart" });

const filePartSchema = z
  .object({
    type: z.literal("file"),
    file: z
      .object({
        filename: z.string().optional(),
        file_data: z.string().optional().meta({ description: "`data:<mime>;base64,<data>` URL" }),
        file_url: z.string().optional().meta({ description: "fetchable http(s) URL" }),
        file_id: z.string().optional().meta({ description: "not supported; use file_data or file_url" }),
      })
      .loose(),
    cache_control: cacheControlSchema,
  })
  .loose()
  .meta({ id: "ChatFileContentPart" });

const userContentPartSchema = z
  .discriminatedUnion("type", [textPartSchema, imageUrlPartSchema, filePartSchema])
  .meta({ id: "ChatUserContentPart" });

const toolContentPartSchema = z.discriminatedUnion("type", [textPartSchema, imageUrlPartSchema]);

/** `content` of a message whose parts may only be text (system, developer, assistant). */
const textContentSchema = z
  .union([z.string(), z.array(textPartSchema), z.null()], {
    error: "must be a string, an array of text parts or null",
  })
  .optional();

const toolCallSchema = z
  .object({
    id: z.string(),
    type: z.literal("function"),
    function: z
      .object({
        name: z.string(),
        arguments: z.string().meta({ description: "JSON-encoded arguments, kept byte-exact" }),
      })
      .loose(),
  })
  .loose()
  .meta({ id: "ChatMessageToolCall" });

const systemMessageSchema = z
  .object({
    role: z.enum(["system", "developer"]),
    content: textContentSchema,
    name: z.string().nullish(),
  })
  .loose()
  .meta({ id: "ChatSystemMessage", description: "`developer` is treated as `system`" });

const userMessageSchema = z
  .object({
    role: z.literal("user"),
    content: z
      .union([z.string(), z.array(userContentPartSchema), z.null()], {
        error: "must be a string, an array of content parts or null",
      })
      .optional(),
    name: z.string().nullish(),
  })
  .loose()
  .meta({ id: "ChatUserMessage" });

const assistantMessageSchema = z
  .object({
    role: z.literal("assistant"),
    content: textContentSchema,
    name: z.string().nullish(),
    reasoning: z.string().nullish().meta({ description: "prior reasoning text" }),
    reasoning_details: z.array(reasoningDetailSchema).nullish().meta({
      description: "opaque provider reasoning state, sent back exactly as the gateway returned it",
    }),
    tool_calls: z.array(toolCallSchema).nullish(),
    // Any shape: a replayed answer may come from another service whose annotations differ, and no
    // upstream takes them back, so they are never read (decode drops them).
    annotations: z.array(z.unknown()).nullish().meta({
      description: "`url_citation` annotations of the answer being replayed; accepted and ignored",
    }),
    // Images the image server tool made: the model already read what they are, and no upstream
    // takes an image in an assistant turn, so they are never read either.
    images: z.array(z.unknown()).nullish().meta({
      description: "images of the answer being replayed (data URLs); accepted and ignored",
    }),
  })
  .loose()
  .meta({ id: "ChatAssistantMessage" });

const toolMessageSchema = z
  .object({
    role: z.literal("tool"),
    content: z
      .union([z.string(), z.array(toolContentPartSchema), z.null()], {
        error: "must be a string, an array of text or image parts or null",
      })
      .optional(),
    tool_call_id: z.string(),
  })
  .loose()
  .meta({ id: "ChatToolMessage" });

const messageSchema = z
  .discriminatedUnion("role", [
    systemMessageSchema,
    userMessageSchema,
    assistantMessageSchema,
    toolMessageSchema,
  ])
  .meta({ id: "ChatMessage" });

const functionToolSchema = z
  .object({
    type: z.literal("function"),
    function: z
      .object({
        name: z.string().min(1),
        description: z.string().nullish(),
        parameters: z.record(z.string(), z.unknown()).nullish().meta({ description: "JSON Schema object" }),
        strict: z.boolean().nullish(),
      })
      .loose(),
  })
  .loose()
  .meta({ id: "ChatFunctionTool" });

const maxUsesSchema = z.number().int().min(1);

const serverToolActivationSchema = z
  .object({
    type: z.string().regex(SERVER_TOOL_TYPE_PATTERN, {
      error: `must be "function" or "<vendor>:<tool>" with <tool> one of ${SERVER_TOOL_IDS.join(", ")}`,
      // Without abort zod treats this branch as the union's only near match and hides the function
      // tool branch's more useful errors (e.g. a missing function.name).
      abort: true,
    }),
    parameters: z.record(z.string(), z.unknown()).optional(),
    max_uses: maxUsesSchema.optional(),
    events: z.boolean().optional(),
  })
  .loose()
  .meta({ id: "ChatServerToolActivation", description: "activates a server tool, e.g. `hi:web_search`" });

/**
 * A type of the gateway's own vocabulary: a function tool's, or `<vendor>:<tool>` (the server-tool
 * form, so a misspelt tool there is refused, not passed on).
 */
export function isKnownChatToolType(type: string): boolean {
  return type === "function" || type.includes(":");
}

/** OpenAI's other Chat tool types (`custom`, …). */
const verbatimToolSchema = createVerbatimSchema(
  "ChatOtherTool",
  isKnownChatToolType,
  "Chat Completions",
  "tool",
);

const toolSchema = z.union([functionToolSchema, serverToolActivationSchema, verbatimToolSchema], {
  error: `must be a function tool {type: "function", function}, a server tool {type: "<vendor>:<tool>"}, or another tool with a type`,
});

const toolChoiceSchema = z
  .union(
    [
      z.enum(["auto", "none", "required"]),
      z.object({ type: z.literal("function"), function: z.object({ name: z.string() }).loose() }).loose(),
      createVerbatimSchema(
        "ChatOtherToolChoice",
        (type) => type === "function",
        "Chat Completions",
        "tool_choice",
      ),
    ],
    {
      error:
        'must be one of auto, none, required, {type: "function", function: {name}} or another tool_choice object with a type',
    },
  )
  .meta({ id: "ChatToolChoice" });

const responseFormatSchema = z
  .discriminatedUnion("type", [
    z.object({ type: z.literal("text") }).loose(),
    z.object({ type: z.literal("json_object") }).loose(),
    z
      .object({
        type: z.literal("json_schema"),
        json_schema: z
          .object({
            name: z.string(),
            schema: z.record(z.string(), z.unknown()),
            strict: z.boolean().nullish(),
            description: z.string().nullish(),
          })
          .loose(),
      })
      .loose(),
  ])
  .meta({ id: "ChatResponseFormat" });

const pluginSchema = z
  .object({
    id: z.enum(SERVER_TOOL_IDS),
    events: z.boolean().optional(),
    max_uses: maxUsesSchema.optional().meta({ description: "default 1000" }),
  })
  .loose()
  .meta({ id: "ChatPlugin", description: "server-tool activation; further properties are tool parameters" });

const webSearchOptionsSchema = z
  .object({
    search_context_size: z.enum(["low", "medium", "high"]).nullish(),
    user_location: z
      .object({
        type: z.literal("approximate"),
        approximate: z
          .object({
            city: z.string().nullish(),
            region: z.string().nullish(),
            country: z.string().nullish(),
            timezone: z.string().nullish(),
          })
          .loose(),
      })
      .loose()
      .nullish(),
  })
  .loose()
  .meta({ id: "ChatWebSearchOptions" });

const predictionSchema = z
  .object({
    type: z.literal("content"),
    content: z.union([z.string(), z.array(textPartSchema)], {
      error: "must be a string or an array of text parts",
    }),
  })
  .loose();

const penaltySchema = z.number().min(-2).max(2);
const unitIntervalSchema = z.number().min(0).max(1);
const positiveIntegerSchema = z.number().int().positive();

export const chatCompletionRequestSchema = z
  .object({
    model: z.string().min(1).meta({ description: "model slug `<creator>/<model>`" }),
    models: fallbackModelsSchema,
    messages: z.array(messageSchema).min(1),
    tools: z.array(toolSchema).nullish(),
    tool_choice: toolChoiceSchema.nullish(),
    parallel_tool_calls: z.boolean().nullish(),
    max_tokens: positiveIntegerSchema
      .nullish()
      .meta({ description: "legacy alias of max_completion_tokens" }),
    max_completion_tokens: positiveIntegerSchema.nullish(),
    temperature: z.number().min(0).max(2).nullish(),
    top_p: unitIntervalSchema.nullish(),
    stop: z
      .union([z.string(), z.array(z.string())], { error: "must be a string or an array of strings" })
      .nullish(),
    response_format: responseFormatSchema.nullish(),
    reasoning_effort: z.enum(REASONING_EFFORTS).meta({ enum: DOCUMENTED_REASONING_EFFORTS }).nullish(),
    stream: z.boolean().nullish(),
    stream_options: z.object({ include_usage: z.unknown().optional() }).loose().nullish().meta({
      description: "accepted whatever `include_usage` holds; the final usage chunk is always emitted",
    }),
    plugins: z.array(pluginSchema).nullish(),
    web_search_options: webSearchOptionsSchema.nullish(),
    hi_tool_events: z.boolean().nullish(),
    hi_strict: strictFieldSchema,
    hi_cache: cacheFieldSchema,
    user: z.string().nullish(),
    service_tier: z.string().nullish().meta({ description: "not supported: rejected" }),
    n: z.number().int().min(1).nullish().meta({ description: "only 1 is supported" }),
    seed: z.number().int().nullish(),
    frequency_penalty: penaltySchema.nullish(),
    presence_penalty: penaltySchema.nullish(),
    logit_bias: z.record(z.string(), z.number().min(-100).max(100)).nullish(),
    logprobs: z.boolean().nullish(),
    top_logprobs: z.number().int().min(0).nullish().meta({ description: "requires logprobs: true" }),
    min_p: unitIntervalSchema.nullish(),
    top_a: unitIntervalSchema.nullish(),
    repetition_penalty: z.number().min(0).max(2).nullish(),
    verbosity: z.enum(["low", "medium", "high", "xhigh", "max"]).nullish(),
    prediction: predictionSchema.nullish(),
    modalities: z.array(z.string()).nullish().meta({ description: 'only "text" is supported' }),
    audio: z.unknown().optional().meta({ description: "not supported: rejected" }),
  })
  .loose()
  .meta({ id: "ChatCompletionRequest" });

export type ChatCompletionRequestBody = z.infer<typeof chatCompletionRequestSchema>;
export type ChatMessageBody = z.infer<typeof messageSchema>;
export type ChatUserContentPartBody = z.infer<typeof userContentPartSchema>;
export type ChatToolBody = z.infer<typeof toolSchema>;
export type ChatServerToolActivationBody = z.infer<typeof serverToolActivationSchema>;
export type ChatToolChoiceBody = z.infer<typeof toolChoiceSchema>;
export type ChatPluginBody = z.infer<typeof pluginSchema>;
export type ChatWebSearchOptionsBody = z.infer<typeof webSearchOptionsSchema>;

/** Top-level fields the schema knows; every other top-level field is passed through verbatim. */
export const KNOWN_REQUEST_FIELDS: ReadonlySet<string> = new Set(
  Object.keys(chatCompletionRequestSchema.shape),
);

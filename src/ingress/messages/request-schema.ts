/**
 * The messages request body as a zod schema: it validates requests and, through the
 * `.meta({ id })` names, documents them in /openapi.json. The count-tokens body is the same schema
 * with `max_tokens` optional, so a body that counts is a body that generates.
 *
 * Conventions (as in the chat-completions schema): wire names stay snake_case here; objects are
 * loose (unknown top-level fields are passed through upstream); optional top-level fields accept
 * `null` as absent; custom `error` strings are predicates that `describe-validation-issue.ts`
 * prefixes with the parameter name.
 */

import { z } from "zod";
import { fallbackModelsSchema } from "../shared/fallback-models.js";
import { cacheFieldSchema } from "../shared/response-cache-option.js";
import { SERVER_TOOL_IDS } from "../shared/server-tool-activations.js";
import { createVerbatimSchema, strictFieldSchema } from "../shared/wire-extras.js";
import {
  assistantBlockSchema,
  cacheControlSchema,
  textBlockSchema,
  userBlockSchema,
} from "./content-block-schemas.js";

export const MESSAGES_EFFORTS = ["low", "medium", "high", "xhigh", "max"] as const;

/**
 * Anthropic's own server tools that the gateway's server tools stand in for, by versioned type
 * (`web_search_20250305`, `web_fetch_20250910`, …). Any version activates the gateway tool.
 */
export const NATIVE_SERVER_TOOL_TYPE_PATTERN = /^(web_search|web_fetch)_\d+$/;

const userMessageSchema = z
  .object({
    role: z.literal("user"),
    content: z.union([z.string(), z.array(userBlockSchema)], {
      error: "must be a string or an array of content blocks",
    }),
  })
  .loose()
  .meta({ id: "MessagesUserMessage" });

const assistantMessageSchema = z
  .object({
    role: z.literal("assistant"),
    content: z.union([z.string(), z.array(assistantBlockSchema)], {
      error: "must be a string or an array of content blocks",
    }),
  })
  .loose()
  .meta({ id: "MessagesAssistantMessage" });

const systemMessageSchema = z
  .object({
    role: z.literal("system"),
    content: z.union([z.string(), z.array(textBlockSchema)], {
      error: "must be a string or an array of text blocks",
    }),
  })
  .loose()
  .meta({ id: "MessagesSystemMessage", description: "hoisted into the system prompt, in order" });

const messageSchema = z
  .discriminatedUnion("role", [userMessageSchema, assistantMessageSchema, systemMessageSchema])
  .meta({ id: "MessagesMessage" });

const customToolSchema = z
  .object({
    type: z.literal("custom").optional(),
    name: z.string().min(1),
    description: z.string().nullish(),
    input_schema: z.record(z.string(), z.unknown()).meta({ description: "JSON Schema object" }),
    strict: z.boolean().nullish(),
    cache_control: cacheControlSchema.nullish(),
  })
  .loose()
  .meta({ id: "MessagesTool" });

const nativeServerToolSchema = z
  .object({
    type: z.string().regex(NATIVE_SERVER_TOOL_TYPE_PATTERN, {
      error: "must be a custom tool type or web_search_<version> / web_fetch_<version>",
      // Without abort zod treats this branch as the union's only near match and hides the custom
      // tool branch's more useful errors (e.g. a missing input_schema).
      abort: true,
    }),
    name: z.string().optional(),
    max_uses: z.number().int().min(1).nullish(),
    cache_control: cacheControlSchema.nullish(),
  })
  .loose()
  .meta({
    id: "MessagesServerTool",
    description: "Anthropic web_search / web_fetch tool; activates the gateway's server tool of that name",
  });

/** A type the two variants above take: a custom tool's or a gateway-run server tool's. */
export function isKnownMessagesToolType(type: string): boolean {
  return type === "custom" || NATIVE_SERVER_TOOL_TYPE_PATTERN.test(type);
}

/** Anthropic's other tool types (`bash_20250124`, `tool_search_tool_regex_…`, `mcp_toolset`, …). */
const verbatimToolSchema = createVerbatimSchema(
  "MessagesOtherTool",
  isKnownMessagesToolType,
  "Anthropic",
  "tool",
);

const toolSchema = z.union([customToolSchema, nativeServerToolSchema, verbatimToolSchema], {
  error:
    "must be a tool {name, input_schema}, a web_search_<version> / web_fetch_<version> server tool, or a tool with a type",
});

const disableParallelSchema = z.boolean().nullish();

/** The `tool_choice` types the gateway translates; any other is carried as it came. */
export const MESSAGES_TOOL_CHOICE_TYPES: ReadonlySet<string> = new Set(["auto", "any", "tool", "none"]);

const knownToolChoiceSchema = z.discriminatedUnion("type", [
  z.object({ type: z.literal("auto"), disable_parallel_tool_use: disableParallelSchema }).loose(),
  z.object({ type: z.literal("any"), disable_parallel_tool_use: disableParallelSchema }).loose(),
  z
    .object({
      type: z.literal("tool"),
      name: z.string().min(1),
      disable_parallel_tool_use: disableParallelSchema,
    })
    .loose(),
  z.object({ type: z.literal("none") }).loose(),
]);

const toolChoiceSchema = z
  .union([
    knownToolChoiceSchema,
    createVerbatimSchema(
      "MessagesOtherToolChoice",
      (type) => MESSAGES_TOOL_CHOICE_TYPES.has(type),
      "Anthropic",
      "tool_choice",
    ),
  ])
  .meta({ id: "MessagesToolChoice" });

const thinkingDisplaySchema = z.unknown().optional().meta({
  description:
    "accepted whatever its value (`summarized`, `omitted`, Claude Code's `updates`): sent to Anthropic routes, left out (and reported) elsewhere",
});

const thinkingSchema = z
  .discriminatedUnion("type", [
    z
      .object({
        type: z.literal("enabled"),
        budget_tokens: z.number().int().positive().nullish(),
        display: thinkingDisplaySchema,
      })
      .loose(),
    z.object({ type: z.literal("disabled") }).loose(),
    z.object({ type: z.literal("adaptive"), display: thinkingDisplaySchema }).loose(),
  ])
  .meta({ id: "MessagesThinking", description: "`budget_tokens` only with type enabled" });

const outputConfigSchema = z
  .object({
    effort: z.enum(MESSAGES_EFFORTS).nullish().meta({ description: "default high" }),
    format: z
      .object({ type: z.literal("json_schema"), schema: z.record(z.string(), z.unknown()) })
      .loose()
      .nullish()
      .meta({ description: "structured output (Anthropic's own form of a JSON schema response format)" }),
  })
  .loose()
  .meta({ id: "MessagesOutputConfig" });

const pluginSchema = z
  .object({
    id: z.enum(SERVER_TOOL_IDS),
    events: z.boolean().optional(),
    max_uses: z.number().int().min(1).optional().meta({ description: "default 1000" }),
  })
  .loose()
  .meta({
    id: "MessagesPlugin",
    description: "server-tool activation; further properties are tool parameters",
  });

const unitIntervalSchema = z.number().min(0).max(1);
const positiveIntegerSchema = z.number().int().positive();

/** Every field but `max_tokens`, whose requiredness is what tells the two bodies apart. */
const sharedFields = {
  model: z.string().min(1).meta({ description: "model slug `<creator>/<model>`" }),
  models: fallbackModelsSchema,
  messages: z.array(messageSchema).min(1),
  system: z
    .union([z.string(), z.array(textBlockSchema)], { error: "must be a string or an array of text blocks" })
    .nullish(),
  tools: z.array(toolSchema).nullish(),
  tool_choice: toolChoiceSchema.nullish(),
  temperature: unitIntervalSchema.nullish(),
  top_p: unitIntervalSchema.nullish(),
  top_k: z.number().int().min(0).nullish(),
  stop_sequences: z.array(z.string()).nullish(),
  stream: z.boolean().nullish(),
  thinking: thinkingSchema.nullish(),
  output_config: outputConfigSchema.nullish(),
  metadata: z
    .record(z.string(), z.unknown())
    .nullish()
    .meta({ description: "arbitrary; `user_id` names the end user" }),
  plugins: z.array(pluginSchema).nullish(),
  hi_tool_events: z.boolean().nullish(),
  hi_strict: strictFieldSchema,
  hi_cache: cacheFieldSchema,
  response_format: z
    .unknown()
    .optional()
    .meta({ description: "not supported: rejected; use a tool definition for structured output" }),
  thread: z
    .unknown()
    .optional()
    .meta({
      description:
        "message threads are not served: refused with `details.error_code` `thread_unsupported_request` " +
        "(Anthropic's SDK then sends the full history)",
    }),
};

export const messagesRequestSchema = z
  .object(sharedFields)
  .extend({ max_tokens: positiveIntegerSchema })
  .loose()
  .meta({ id: "MessagesRequest" });

export const messagesCountTokensRequestSchema = z
  .object(sharedFields)
  .extend({ max_tokens: positiveIntegerSchema.nullish() })
  .loose()
  .meta({ id: "MessagesCountTokensRequest", description: "a messages request; max_tokens is optional" });

/** The decoder works on the wider of the two bodies; `max_tokens` is then checked by the schema. */
export type MessagesRequestBody = z.infer<typeof messagesCountTokensRequestSchema>;
export type MessagesMessageBody = z.infer<typeof messageSchema>;
export type MessagesToolBody = z.infer<typeof toolSchema>;
export type MessagesToolChoiceBody = z.infer<typeof toolChoiceSchema>;
export type MessagesThinkingBody = z.infer<typeof thinkingSchema>;
export type MessagesPluginBody = z.infer<typeof pluginSchema>;

/** Top-level fields the schema knows; every other top-level field is passed through verbatim. */
export const KNOWN_REQUEST_FIELDS: ReadonlySet<string> = new Set(Object.keys(messagesRequestSchema.shape));

/**
 * The responses request body as a zod schema. It validates requests and, through the
 * `.meta({ id })` names, documents them in /openapi.json.
 *
 * Conventions (as in the chat-completions schema):
 * - Wire names stay snake_case here; `decode-request.ts` turns them into canonical camelCase.
 * - Objects are loose: unknown top-level fields are forwarded upstream, and nested objects carry
 *   fields SDKs add.
 * - Optional fields also accept `null` and treat it as absent (OpenAI's own SDK types are nullable).
 * - The stateful fields (`previous_response_id`, `store`, `background`, `conversation`, `prompt`)
 *   and `stop` are in the schema so they are documented; reject-unsupported-fields.ts refuses them.
 */

import { z } from "zod";
import { fallbackModelsSchema } from "../shared/fallback-models.js";
import { REASONING_EFFORTS } from "../shared/reasoning-efforts.js";
import { cacheFieldSchema } from "../shared/response-cache-option.js";
import { SERVER_TOOL_IDS } from "../shared/server-tool-activations.js";
import { createVerbatimSchema, strictFieldSchema } from "../shared/wire-extras.js";
import { inputItemSchema } from "./input-item-schema.js";

/**
 * Hosted (OpenAI built-in) tool types the gateway runs with its own server tools; every other type
 * (file_search, code_interpreter, mcp, Codex's `namespace` and `custom`, …) goes to OpenAI Responses
 * routes as it came and is left out (and reported) elsewhere.
 */
export const HOSTED_SERVER_TOOL_IDS = {
  web_search_preview: "web_search",
  web_search_preview_2025_03_11: "web_search",
  web_search_2025_08_26: "web_search",
  image_generation: "image",
} as const;

/** `web_search`, `hi:web_search` (the chat format's `<vendor>:<tool>` form) or a hosted type. */
const SERVER_TOOL_TYPE_PATTERN = new RegExp(
  `^(?:[^:\\s]+:)?(?:${SERVER_TOOL_IDS.join("|")})$|^(?:${Object.keys(HOSTED_SERVER_TOOL_IDS).join("|")})$`,
);

export const VERBOSITY_LEVELS = ["low", "medium", "high", "xhigh", "max"] as const;

const functionToolSchema = z
  .object({
    type: z.literal("function"),
    name: z.string().min(1),
    description: z.string().nullish(),
    parameters: z.record(z.string(), z.unknown()).nullish().meta({ description: "JSON Schema object" }),
    strict: z.boolean().nullish(),
  })
  .loose()
  .meta({ id: "ResponsesFunctionTool" });

const serverToolSchema = z
  .object({
    type: z.string().regex(SERVER_TOOL_TYPE_PATTERN, {
      error:
        `must be "function", a server tool (${SERVER_TOOL_IDS.join(", ")}, optionally "<vendor>:"-prefixed) ` +
        `or a hosted tool the gateway runs (${Object.keys(HOSTED_SERVER_TOOL_IDS).join(", ")})`,
      // Without abort zod reports this branch as the union's near match and hides the function-tool
      // branch's more useful errors (e.g. a missing name).
      abort: true,
    }),
    max_uses: z.number().int().min(1).optional().meta({ description: "default 1000" }),
    events: z.boolean().optional().meta({ description: "stream `hi.tool_event` frames for this tool" }),
    parameters: z.record(z.string(), z.unknown()).optional(),
    search_context_size: z.enum(["low", "medium", "high"]).nullish(),
    user_location: z.record(z.string(), z.unknown()).nullish(),
    filters: z.record(z.string(), z.unknown()).nullish(),
    vector_store_ids: z.array(z.string()).nullish(),
    container: z.union([z.string(), z.record(z.string(), z.unknown())]).nullish(),
  })
  .loose()
  .meta({
    id: "ResponsesServerTool",
    description:
      "activates a server tool; fields other than type, max_uses and events are the tool's parameters",
  });

/**
 * A type of the gateway's own vocabulary: a function tool's, a server tool's it runs, or any
 * `<vendor>:<tool>` (so a misspelt server tool there is refused, not passed on).
 */
export function isKnownResponsesToolType(type: string): boolean {
  return type === "function" || type.includes(":") || SERVER_TOOL_TYPE_PATTERN.test(type);
}

/** OpenAI's other tool types (`namespace`, `custom`, `file_search`, `mcp`, `shell`, …). */
const verbatimToolSchema = createVerbatimSchema(
  "ResponsesOtherTool",
  isKnownResponsesToolType,
  "OpenAI Responses",
  "tool",
);

const toolSchema = z.union([functionToolSchema, serverToolSchema, verbatimToolSchema], {
  error:
    `must be a function tool {type: "function", name}, a server tool with type one of ` +
    `${SERVER_TOOL_IDS.join(", ")} (optionally "<vendor>:"-prefixed), ${Object.keys(HOSTED_SERVER_TOOL_IDS).join(", ")}, ` +
    "or another tool with a type",
});

const toolChoiceSchema = z
  .union(
    [
      z.enum(["auto", "none", "required"]),
      z.object({ type: z.literal("function"), name: z.string() }).loose(),
      createVerbatimSchema(
        "ResponsesOtherToolChoice",
        (type) => type === "function",
        "OpenAI Responses",
        "tool_choice",
      ),
    ],
    {
      error:
        'must be one of auto, none, required, {type: "function", name} or another tool_choice object with a type',
    },
  )
  .meta({ id: "ResponsesToolChoice" });

const textFormatSchema = z
  .discriminatedUnion("type", [
    z.object({ type: z.literal("text") }).loose(),
    z.object({ type: z.literal("json_object") }).loose(),
    z
      .object({
        type: z.literal("json_schema"),
        name: z.string(),
        schema: z.record(z.string(), z.unknown()),
        strict: z.boolean().nullish(),
        description: z.string().nullish(),
      })
      .loose(),
  ])
  .meta({ id: "ResponsesTextFormat" });

const penaltySchema = z.number().min(-2).max(2);

export const responsesRequestSchema = z
  .object({
    model: z.string().min(1).meta({ description: "model slug `<creator>/<model>`" }),
    models: fallbackModelsSchema,
    input: z.union([z.string(), z.array(inputItemSchema).min(1)], {
      error: "must be a string or an array of input items",
    }),
    instructions: z.string().nullish().meta({ description: "system instructions" }),
    tools: z.array(toolSchema).nullish(),
    tool_choice: toolChoiceSchema.nullish(),
    parallel_tool_calls: z.boolean().nullish(),
    max_tool_calls: z.number().int().min(0).nullish().meta({ description: "forwarded to the upstream" }),
    max_output_tokens: z.number().int().positive().nullish(),
    temperature: z.number().min(0).max(2).nullish(),
    top_p: z.number().min(0).max(1).nullish(),
    top_logprobs: z.number().int().min(0).max(20).nullish(),
    include: z.array(z.string()).nullish().meta({ description: "forwarded to the upstream" }),
    frequency_penalty: penaltySchema.nullish(),
    presence_penalty: penaltySchema.nullish(),
    logit_bias: z.record(z.string(), z.number().min(-100).max(100)).nullish(),
    seed: z.number().int().nullish(),
    stream: z.boolean().nullish(),
    text: z
      .object({ format: textFormatSchema.nullish(), verbosity: z.enum(VERBOSITY_LEVELS).nullish() })
      .loose()
      .nullish(),
    reasoning: z
      .object({
        effort: z.enum(REASONING_EFFORTS).nullish(),
        summary: z.unknown().optional().meta({
          description: "accepted whatever its value (`auto`, `concise`, `detailed`, a newer one) and ignored",
        }),
      })
      .loose()
      .nullish(),
    previous_response_id: z
      .string()
      .nullish()
      .meta({ description: "not supported (stateless): rejected; send the full input" }),
    store: z
      .boolean()
      .nullish()
      .meta({
        description:
          "true is refused: the gateway keeps no state. Unless false, item ids carry their items, so " +
          "item_reference to them resolves; false: items are replayed whole, ids carry nothing",
      }),
    background: z.boolean().nullish().meta({ description: "only false: rejected when true" }),
    conversation: z
      .union([z.string(), z.record(z.string(), z.unknown())])
      .nullish()
      .meta({ description: "not supported (stateless): rejected when set" }),
    prompt: z
      .record(z.string(), z.unknown())
      .nullish()
      .meta({ description: "stored prompts are not supported: rejected when set" }),
    stop: z
      .unknown()
      .optional()
      .meta({ description: "stop sequences are not expressible in this format: rejected" }),
    service_tier: z
      .unknown()
      .optional()
      .meta({ description: "accepted whatever its value and ignored: the gateway owns tiering" }),
    user: z.string().nullish(),
    safety_identifier: z.string().nullish().meta({ description: "end-user identifier; wins over user" }),
    hi_tool_events: z.boolean().nullish().meta({ description: "opt every server tool into hi.tool_event" }),
    hi_strict: strictFieldSchema,
    hi_cache: cacheFieldSchema,
  })
  .loose()
  .meta({ id: "ResponsesRequest" });

export type ResponsesRequestBody = z.infer<typeof responsesRequestSchema>;
export type ResponsesToolBody = z.infer<typeof toolSchema>;
export type ResponsesServerToolBody = z.infer<typeof serverToolSchema>;
export type ResponsesToolChoiceBody = z.infer<typeof toolChoiceSchema>;
export type ResponsesTextFormatBody = z.infer<typeof textFormatSchema>;

/** Top-level fields the schema knows; every other top-level field is passed through verbatim. */
export const KNOWN_REQUEST_FIELDS: ReadonlySet<string> = new Set(Object.keys(responsesRequestSchema.shape));

/**
 * Content blocks of a messages-format conversation as zod schemas, split by the role
 * that may send them. Wire names stay snake_case; `decode-content-blocks.ts` makes them canonical.
 *
 * Objects are loose: Anthropic keeps adding block fields (`citations`, `context`, `caller`) and
 * SDKs echo response fields back, so unknown nested fields are ignored rather than refused.
 */
import { z } from "zod";

export const cacheControlSchema = z
  .object({
    type: z.literal("ephemeral"),
    ttl: z.string().optional().meta({ description: '"5m" (default) or "1h"' }),
  })
  .loose()
  .meta({ id: "MessagesCacheControl", description: "prompt-cache breakpoint" });

export const textBlockSchema = z
  .object({
    type: z.literal("text"),
    text: z.string(),
    cache_control: cacheControlSchema.nullish(),
  })
  .loose()
  .meta({ id: "MessagesTextBlock" });

/**
 * Media sources. `text` (a plain-text document) is Anthropic's own shape and maps losslessly to a
 * base64 `text/plain` file; `file` (a Files API id) is refused in the decoder: the gateway has no
 * file store to resolve it against.
 */
const base64SourceSchema = z
  .object({ type: z.literal("base64"), media_type: z.string().min(1), data: z.string() })
  .loose();
const urlSourceSchema = z.object({ type: z.literal("url"), url: z.string() }).loose();
const fileSourceSchema = z
  .object({ type: z.literal("file"), file_id: z.string() })
  .loose()
  .meta({ description: "not supported; use base64 or url" });
const textSourceSchema = z
  .object({ type: z.literal("text"), media_type: z.string().optional(), data: z.string() })
  .loose();

const imageSourceSchema = z
  .discriminatedUnion("type", [base64SourceSchema, urlSourceSchema, fileSourceSchema])
  .meta({ id: "MessagesImageSource" });

const documentSourceSchema = z
  .discriminatedUnion("type", [base64SourceSchema, urlSourceSchema, fileSourceSchema, textSourceSchema])
  .meta({ id: "MessagesDocumentSource" });

export const imageBlockSchema = z
  .object({
    type: z.literal("image"),
    source: imageSourceSchema,
    cache_control: cacheControlSchema.nullish(),
  })
  .loose()
  .meta({ id: "MessagesImageBlock" });

const documentBlockSchema = z
  .object({
    type: z.literal("document"),
    source: documentSourceSchema,
    title: z.string().nullish(),
    cache_control: cacheControlSchema.nullish(),
  })
  .loose()
  .meta({ id: "MessagesDocumentBlock", description: "a PDF or plain-text document" });

/**
 * A block inside a tool result of another type than text or image (Claude Code's `tool_reference`,
 * `search_result`, `document`): sent as it is to Anthropic routes, left out (and reported) elsewhere.
 */
const verbatimResultBlockSchema = z
  .object({
    type: z
      .string()
      .refine((type) => type !== "text" && type !== "image", { error: "is a known block type", abort: true }),
  })
  .loose()
  .meta({
    id: "MessagesOtherToolResultBlock",
    description: "another block type: sent as it is to Anthropic routes, left out elsewhere (X-Hi-Dropped)",
  });

const toolResultContentBlockSchema = z.union([textBlockSchema, imageBlockSchema, verbatimResultBlockSchema], {
  error: "must be a text or image block, or a block with a type",
});

const toolResultBlockSchema = z
  .object({
    type: z.literal("tool_result"),
    tool_use_id: z.string().min(1),
    content: z
      .union([z.string(), z.array(toolResultContentBlockSchema)], {
        error: "must be a string or an array of content blocks",
      })
      .optional(),
    is_error: z.boolean().nullish(),
    cache_control: cacheControlSchema.nullish(),
  })
  .loose()
  .meta({ id: "MessagesToolResultBlock" });

const thinkingBlockSchema = z
  .object({
    type: z.literal("thinking"),
    thinking: z.string(),
    signature: z.string().nullish().meta({ description: "opaque; send back exactly as received" }),
  })
  .loose()
  .meta({ id: "MessagesThinkingBlock" });

const redactedThinkingBlockSchema = z
  .object({ type: z.literal("redacted_thinking"), data: z.string() })
  .loose()
  .meta({ id: "MessagesRedactedThinkingBlock" });

const toolUseBlockSchema = z
  .object({
    type: z.literal("tool_use"),
    id: z.string().min(1),
    name: z.string().min(1),
    input: z.record(z.string(), z.unknown()),
    cache_control: cacheControlSchema.nullish(),
  })
  .loose()
  .meta({ id: "MessagesToolUseBlock" });

/**
 * Server-tool transcript blocks, which clients replay from earlier turns (the gateway's own, or
 * Anthropic's). The gateway runs server tools itself and each turn's run starts afresh, so there is
 * nothing to forward them to: they are accepted and dropped, and the assistant text that used their
 * results stays (its `citations` are dropped too). Only the tools the gateway renders as blocks are
 * accepted: a call of another server tool (`code_execution`, …) is refused like any block the
 * gateway does not support, since dropping it would hide work the conversation relied on.
 */
const serverToolUseBlockSchema = z
  .object({
    type: z.literal("server_tool_use"),
    name: z.enum(["web_search", "web_fetch"]),
  })
  .loose()
  .meta({ description: "a replayed web_search or web_fetch call; dropped" });
const webSearchToolResultBlockSchema = z
  .object({ type: z.literal("web_search_tool_result") })
  .loose()
  .meta({ description: "a replayed search result; dropped" });
const webFetchToolResultBlockSchema = z
  .object({ type: z.literal("web_fetch_tool_result") })
  .loose()
  .meta({ description: "a replayed fetch result; dropped" });

/**
 * A top-level block of a type the gateway does not know (`search_result`, a block newer than the
 * gateway): any object with a string `type` outside `known`. The check aborts, so a malformed block
 * of a known type still gets that type's own error.
 */
function createVerbatimBlockSchema(id: string, known: ReadonlySet<string>) {
  return z
    .object({
      type: z.string().refine((type) => !known.has(type), { error: "is a known block type", abort: true }),
    })
    .loose()
    .meta({
      id,
      description:
        "a block of another type: sent as it is to Anthropic routes, left out elsewhere (reported in X-Hi-Dropped)",
    });
}

const knownUserBlockSchema = z.discriminatedUnion("type", [
  textBlockSchema,
  imageBlockSchema,
  documentBlockSchema,
  toolResultBlockSchema,
]);

/** The block types a user turn's schema knows (text, image, document, tool_result). */
export const KNOWN_USER_BLOCK_TYPES: ReadonlySet<string> = new Set(
  knownUserBlockSchema.options.map((option) => option.shape.type.value),
);

/**
 * An image in an assistant turn: one the image server tool made, replayed. No upstream takes an
 * image from the assistant, and the model already read what it was, so it is accepted and dropped.
 */
const assistantImageBlockSchema = z
  .object({ type: z.literal("image") })
  .loose()
  .meta({ description: "a replayed image the image server tool made; dropped" });

const knownAssistantBlockSchema = z.discriminatedUnion("type", [
  textBlockSchema,
  thinkingBlockSchema,
  redactedThinkingBlockSchema,
  toolUseBlockSchema,
  serverToolUseBlockSchema,
  webSearchToolResultBlockSchema,
  webFetchToolResultBlockSchema,
  assistantImageBlockSchema,
]);

/** The block types an assistant turn's schema knows. */
export const KNOWN_ASSISTANT_BLOCK_TYPES: ReadonlySet<string> = new Set(
  knownAssistantBlockSchema.options.map((option) => option.shape.type.value),
);

/**
 * Every block type the format defines for either role: one in the other role's turn is misplaced
 * (Anthropic refuses it too), not newer than the gateway, so it stays refused.
 */
const KNOWN_BLOCK_TYPES: ReadonlySet<string> = new Set([
  ...KNOWN_USER_BLOCK_TYPES,
  ...KNOWN_ASSISTANT_BLOCK_TYPES,
]);

export const userBlockSchema = z
  .union([knownUserBlockSchema, createVerbatimBlockSchema("MessagesOtherUserBlock", KNOWN_BLOCK_TYPES)], {
    error: "must be one of text, image, document, tool_result, or a block type this format does not define",
  })
  .meta({ id: "MessagesUserContentBlock" });

export const assistantBlockSchema = z
  .union(
    [knownAssistantBlockSchema, createVerbatimBlockSchema("MessagesOtherAssistantBlock", KNOWN_BLOCK_TYPES)],
    {
      error:
        "must be one of text, thinking, redacted_thinking, tool_use, server_tool_use, web_search_tool_result, web_fetch_tool_result, image, or a block type this format does not define",
    },
  )
  .meta({ id: "MessagesAssistantContentBlock" });

export type MessagesTextBlockBody = z.infer<typeof textBlockSchema>;
export type MessagesImageBlockBody = z.infer<typeof imageBlockSchema>;
export type MessagesUserBlockBody = z.infer<typeof knownUserBlockSchema>;
export type MessagesAssistantBlockBody = z.infer<typeof knownAssistantBlockSchema>;
/** A block of a type the gateway does not know, as the caller sent it. */
export type MessagesOtherBlockBody = Record<string, unknown> & { type: string };
export type MessagesCacheControlBody = z.infer<typeof cacheControlSchema>;

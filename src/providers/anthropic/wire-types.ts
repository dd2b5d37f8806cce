/**
 * The Anthropic Messages wire shapes this adapter sends and reads (the
 * `@anthropic-ai/sdk` package's `src/resources/messages/messages.ts`). Request types are exact;
 * response types are loose
 * (`| null`, optional everywhere) because relays and older API versions omit or null fields, and
 * the parsers check every value before using it.
 */

export interface AnthropicCacheControl {
  type: "ephemeral";
  ttl?: string;
}

export type AnthropicMediaSource =
  | { type: "base64"; media_type: string; data: string }
  | { type: "url"; url: string }
  | { type: "text"; media_type: "text/plain"; data: string };

export interface AnthropicTextBlock {
  type: "text";
  text: string;
  cache_control?: AnthropicCacheControl;
}

export interface AnthropicImageBlock {
  type: "image";
  source: AnthropicMediaSource;
  cache_control?: AnthropicCacheControl;
}

export interface AnthropicDocumentBlock {
  type: "document";
  source: AnthropicMediaSource;
  title?: string;
  cache_control?: AnthropicCacheControl;
}

export interface AnthropicThinkingBlock {
  type: "thinking";
  thinking: string;
  signature: string;
}

export interface AnthropicRedactedThinkingBlock {
  type: "redacted_thinking";
  data: string;
}

export interface AnthropicToolUseBlock {
  type: "tool_use";
  id: string;
  name: string;
  input: Record<string, unknown>;
}

export interface AnthropicToolResultBlock {
  type: "tool_result";
  tool_use_id: string;
  content?: Array<AnthropicTextBlock | AnthropicImageBlock | AnthropicDocumentBlock | AnthropicVerbatimBlock>;
  is_error?: boolean;
}

/** A block a Messages caller sent that the gateway passes on as it came (`tool_reference`). */
export type AnthropicVerbatimBlock = Record<string, unknown> & { type: string };

/** A block of a tool Anthropic ran itself, sent back as Anthropic gave it (`server_tool_use`, results). */
export type AnthropicNativeToolBlock = Record<string, unknown> & { type: string };

export type AnthropicContentBlock =
  | AnthropicNativeToolBlock
  | AnthropicTextBlock
  | AnthropicImageBlock
  | AnthropicDocumentBlock
  | AnthropicThinkingBlock
  | AnthropicRedactedThinkingBlock
  | AnthropicToolUseBlock
  | AnthropicToolResultBlock;

export interface AnthropicMessage {
  role: "user" | "assistant";
  content: AnthropicContentBlock[];
}

export interface AnthropicTool {
  name: string;
  description?: string;
  input_schema: Record<string, unknown>;
  cache_control?: AnthropicCacheControl;
  /** Fields a Messages caller set that the gateway passes on as they came (`defer_loading`). */
  [field: string]: unknown;
}

/** A tool Anthropic runs itself (`web_search_20250305`, `web_fetch_20250910`). */
export interface AnthropicServerTool {
  type: string;
  name: "web_search" | "web_fetch";
  max_uses: number;
  allowed_domains?: string[];
  blocked_domains?: string[];
  user_location?: {
    type: "approximate";
    city?: string;
    region?: string;
    country?: string;
    timezone?: string;
  };
  max_content_tokens?: number;
}

export type AnthropicToolChoice =
  | { type: "auto"; disable_parallel_tool_use?: boolean }
  | { type: "any"; disable_parallel_tool_use?: boolean }
  | { type: "tool"; name: string; disable_parallel_tool_use?: boolean }
  | { type: "none" };

export type AnthropicThinkingConfig = { type: "enabled"; budget_tokens: number };

/** The request body; `Record` because allow-listed pass-through fields are merged in. */
export type AnthropicMessagesBody = Record<string, unknown> & {
  model: string;
  max_tokens: number;
  messages: AnthropicMessage[];
  system?: AnthropicTextBlock[];
  // Verbatim: tools of types the gateway has no vocabulary for, from a Messages caller.
  tools?: Array<AnthropicTool | AnthropicServerTool | Record<string, unknown>>;
  tool_choice?: AnthropicToolChoice;
  thinking?: AnthropicThinkingConfig;
  temperature?: number;
  top_p?: number;
  top_k?: number;
  stop_sequences?: string[];
  metadata?: { user_id: string };
  output_config?: Record<string, unknown>;
  stream?: boolean;
};

/** `usage` of a message, of `message_start.message` and (cumulative) of `message_delta`. */
export interface AnthropicUsageWire {
  input_tokens?: number | null;
  output_tokens?: number | null;
  cache_read_input_tokens?: number | null;
  cache_creation_input_tokens?: number | null;
  cache_creation?: {
    ephemeral_5m_input_tokens?: number | null;
    ephemeral_1h_input_tokens?: number | null;
  } | null;
  output_tokens_details?: { thinking_tokens?: number | null } | null;
}

export interface AnthropicContentBlockWire {
  type?: string | null;
  text?: string | null;
  thinking?: string | null;
  signature?: string | null;
  data?: string | null;
  id?: string | null;
  name?: string | null;
  input?: unknown;
  /** Result blocks of tools Anthropic ran itself. */
  tool_use_id?: string | null;
  content?: unknown;
  /** Text blocks that cite those results. */
  citations?: unknown;
}

export interface AnthropicMessageWire {
  id?: string | null;
  type?: string | null;
  model?: string | null;
  content?: AnthropicContentBlockWire[] | null;
  stop_reason?: string | null;
  stop_sequence?: string | null;
  usage?: AnthropicUsageWire | null;
  error?: unknown;
}

export interface AnthropicStreamEventWire {
  type?: string | null;
  message?: AnthropicMessageWire | null;
  index?: number | null;
  content_block?: AnthropicContentBlockWire | null;
  delta?: {
    type?: string | null;
    text?: string | null;
    thinking?: string | null;
    signature?: string | null;
    partial_json?: string | null;
    /** `citations_delta`: one citation of the open text block. */
    citation?: unknown;
    stop_reason?: string | null;
    stop_sequence?: string | null;
  } | null;
  usage?: AnthropicUsageWire | null;
  error?: unknown;
}

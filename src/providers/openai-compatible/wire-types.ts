/**
 * The Chat Completions wire shapes this adapter sends and reads. Response
 * types are deliberately loose (`| null`, optional everywhere): compatible servers omit, null or
 * reshape fields, and the parsers check every value before using it.
 */

export type ChatContentPart =
  | { type: "text"; text: string }
  | { type: "image_url"; image_url: { url: string; detail?: "low" | "high" | "auto" } }
  | { type: "file"; file: { filename: string; file_data: string } };

export interface ChatToolCall {
  id: string;
  type: "function";
  function: { name: string; arguments: string };
}

export type ChatMessage =
  | { role: "system" | "developer"; content: string | Array<{ type: "text"; text: string }> }
  | { role: "user"; content: string | ChatContentPart[]; name?: string }
  | {
      role: "assistant";
      content: string | null;
      name?: string;
      tool_calls?: ChatToolCall[];
      /** Non-standard; accepted by compatible hosts that return reasoning text. */
      reasoning?: string;
    }
  | { role: "tool"; tool_call_id: string; content: string | ChatContentPart[] };

export interface ChatTool {
  type: "function";
  function: {
    name: string;
    description?: string;
    parameters?: Record<string, unknown>;
    strict?: boolean;
  };
}

export type ChatToolChoice = "auto" | "none" | "required" | { type: "function"; function: { name: string } };

export type ChatResponseFormat =
  | { type: "text" }
  | { type: "json_object" }
  | {
      type: "json_schema";
      json_schema: { name: string; schema: Record<string, unknown>; strict?: boolean; description?: string };
    };

/** The request body; `Record` because pass-through fields are merged in verbatim. */
export type ChatCompletionsBody = Record<string, unknown> & {
  model: string;
  messages: ChatMessage[];
  stream?: boolean;
};

export interface ChatUsageWire {
  prompt_tokens?: number | null;
  completion_tokens?: number | null;
  total_tokens?: number | null;
  prompt_tokens_details?: { cached_tokens?: number | null; cache_write_tokens?: number | null } | null;
  completion_tokens_details?: { reasoning_tokens?: number | null } | null;
}

export interface ChatToolCallWire {
  index?: number | null;
  id?: string | null;
  type?: string | null;
  function?: { name?: string | null; arguments?: unknown } | null;
}

export interface ChatMessageWire {
  role?: string | null;
  content?: string | null;
  refusal?: string | null;
  reasoning?: string | null;
  reasoning_content?: string | null;
  tool_calls?: ChatToolCallWire[] | null;
}

export interface ChatCompletionWire {
  id?: string | null;
  model?: string | null;
  choices?: Array<{
    index?: number | null;
    message?: ChatMessageWire | null;
    finish_reason?: string | null;
  }> | null;
  usage?: ChatUsageWire | null;
  error?: unknown;
}

export interface ChatCompletionChunkWire {
  id?: string | null;
  model?: string | null;
  choices?: Array<{
    index?: number | null;
    delta?: ChatMessageWire | null;
    finish_reason?: string | null;
  }> | null;
  usage?: ChatUsageWire | null;
  error?: unknown;
}

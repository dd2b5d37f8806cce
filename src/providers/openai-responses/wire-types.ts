/**
 * The OpenAI Responses wire shapes this adapter sends and reads (the `openai`
 * package's `resources/responses/responses.ts`). Response and event types are deliberately loose
 * (optional,
 * nullable): recordings from 2025 lack fields newer ones carry, and the parsers check every value
 * before using it.
 */

export type ResponsesInputContent =
  | { type: "input_text"; text: string }
  | { type: "input_image"; image_url: string; detail: "low" | "high" | "auto" }
  | { type: "input_file"; filename?: string; file_data?: string; file_url?: string };

export interface ResponsesSummaryText {
  type: "summary_text";
  text: string;
}

export type ResponsesInputItem =
  | { type: "message"; role: "user"; content: ResponsesInputContent[] }
  | { type: "message"; role: "assistant"; content: Array<{ type: "output_text"; text: string }> }
  | {
      type: "reasoning";
      id?: string;
      summary: ResponsesSummaryText[];
      encrypted_content: string;
    }
  | { type: "function_call"; call_id: string; name: string; arguments: string; namespace?: string }
  /** An item a Responses caller sent that the gateway passes on as it came (`custom_tool_call`). */
  | (Record<string, unknown> & { type: string })
  /** A hosted web search's item, sent back as the response gave it (see convert-input.ts). */
  | { type: "web_search_call"; id: string; status: string; action?: unknown }
  | {
      type: "function_call_output";
      call_id: string;
      /** A string, or content parts when the result holds images. */
      output: string | ResponsesInputContent[];
    };

export interface ResponsesFunctionTool {
  type: "function";
  name: string;
  description?: string;
  parameters: Record<string, unknown>;
  /** Responses defaults `strict` to true (Chat defaults it to false), so it is always sent. */
  strict: boolean;
  /** Fields a Responses caller set that the gateway passes on as they came. */
  [field: string]: unknown;
}

export type ResponsesToolChoice = "auto" | "none" | "required" | { type: "function"; name: string };

export type ResponsesTextFormat =
  | { type: "text" }
  | { type: "json_object" }
  | {
      type: "json_schema";
      name: string;
      schema: Record<string, unknown>;
      strict?: boolean;
      description?: string;
    };

/** The request body; `Record` because pass-through fields are merged in verbatim. */
export type ResponsesBody = Record<string, unknown> & {
  model: string;
  input: ResponsesInputItem[];
  store: false;
  stream?: boolean;
};

export interface ResponsesUsageWire {
  input_tokens?: number | null;
  input_tokens_details?: { cached_tokens?: number | null; cache_write_tokens?: number | null } | null;
  output_tokens?: number | null;
  output_tokens_details?: { reasoning_tokens?: number | null } | null;
  total_tokens?: number | null;
}

export interface ResponsesContentWire {
  type?: string | null;
  text?: string | null;
  refusal?: string | null;
  /** `output_text`: `url_citation`s of a web search OpenAI ran. */
  annotations?: unknown;
}

/** A web search OpenAI runs itself (`tools` entry). */
export interface ResponsesWebSearchTool {
  type: "web_search";
  filters?: { allowed_domains: string[] };
  search_context_size?: "low" | "medium" | "high";
  user_location?: {
    type: "approximate";
    city?: string;
    region?: string;
    country?: string;
    timezone?: string;
  };
}

/** One element of `output` (message, function_call, reasoning, or a hosted tool's item). */
export interface ResponsesOutputItemWire {
  id?: string | null;
  type?: string | null;
  status?: string | null;
  role?: string | null;
  content?: ResponsesContentWire[] | null;
  call_id?: string | null;
  name?: string | null;
  arguments?: unknown;
  /** `custom_tool_call`: the freeform input text. */
  input?: unknown;
  /** `function_call` / `custom_tool_call`: the tool group of the called tool. */
  namespace?: unknown;
  summary?: ResponsesContentWire[] | null;
  encrypted_content?: string | null;
  /** `web_search_call`: what the search did (search, open_page, find_in_page). */
  action?: unknown;
}

export interface ResponsesErrorWire {
  code?: string | null;
  message?: string | null;
  type?: string | null;
  param?: string | null;
}

export interface ResponseWire {
  id?: string | null;
  object?: string | null;
  model?: string | null;
  status?: string | null;
  error?: ResponsesErrorWire | null;
  incomplete_details?: { reason?: string | null } | null;
  output?: ResponsesOutputItemWire[] | null;
  usage?: ResponsesUsageWire | null;
}

/** Any streamed event; which fields are set depends on `type`. */
export interface ResponsesStreamEventWire {
  type?: string | null;
  sequence_number?: number | null;
  response?: ResponseWire | null;
  output_index?: number | null;
  item_id?: string | null;
  item?: ResponsesOutputItemWire | null;
  content_index?: number | null;
  summary_index?: number | null;
  /** `response.output_text.annotation.added` */
  annotation?: unknown;
  delta?: unknown;
  arguments?: unknown;
  /** `response.custom_tool_call_input.done` */
  input?: unknown;
  /** `error` events: nested (live API) or top-level (OpenAPI spec) error fields. */
  error?: ResponsesErrorWire | null;
  code?: string | null;
  message?: string | null;
  param?: string | null;
}

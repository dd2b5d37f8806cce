/**
 * The response object shared by the non-streaming body and every stream event that
 * carries a `response`. Besides the gateway's documented fields it has everything OpenAI's
 * published `Response`
 * schema requires, because SDKs and typed clients read them: `error`, `incomplete_details`,
 * `instructions`, `tools`, `tool_choice`, `parallel_tool_calls`, `temperature`, `top_p`, `metadata`, ….
 * Those echo the request's effective settings when the encode context carries the decoded request,
 * and otherwise say "not set" (`null`, `[]`, `auto`, `{}`), which is what the encoder can honestly
 * know.
 */
import type { CanonicalRequest, ReasoningEffort, ResponseFormat, ToolChoice } from "../../canonical/index.js";
import type { EncodeContext } from "../ingress-format.js";
import type { ResponsesOutputItem } from "./encode-output-items.js";
import type { ResponsesUsage } from "./encode-usage.js";
import type { IncompleteReason } from "./map-response-status.js";

export interface ResponsesEncodeContext extends EncodeContext {
  /** The decoded request, so the response can echo its settings as OpenAI's does. */
  request?: CanonicalRequest;
}

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

export interface ResponsesFunctionToolEcho {
  type: "function";
  name: string;
  description: string | null;
  parameters: Record<string, unknown> | null;
  strict: boolean | null;
}

/** The request settings a response repeats. */
export interface ResponseEcho {
  /** The request's penalties, null when unset: strict client schemas (@openrouter/sdk) require both. */
  frequency_penalty: number | null;
  presence_penalty: number | null;
  instructions: string | null;
  max_output_tokens: number | null;
  parallel_tool_calls: boolean;
  previous_response_id: null;
  reasoning: { effort: ReasoningEffort | null; summary: null };
  /** Always false: the gateway keeps no state. */
  store: false;
  temperature: number | null;
  text: { format: ResponsesTextFormat; verbosity?: string };
  /** A choice of another type (`allowed_tools`) is echoed as it came. */
  tool_choice: "auto" | "none" | "required" | { type: "function"; name: string } | Record<string, unknown>;
  /** Function tools only; server tools are the gateway's, not OpenAI tool types. */
  tools: ResponsesFunctionToolEcho[];
  top_p: number | null;
  truncation: "disabled";
  user?: string;
  metadata: Record<string, unknown>;
}

export type ResponseObjectStatus = "in_progress" | "completed" | "incomplete" | "failed";

export interface ResponseObject extends ResponseEcho {
  id: string;
  object: "response";
  created_at: number;
  status: ResponseObjectStatus;
  completed_at: number | null;
  error: { code: string; message: string } | null;
  incomplete_details: { reason: IncompleteReason } | null;
  model: string;
  output: ResponsesOutputItem[];
  /** null until the response is finished, as OpenAI sends it in `response.created`. */
  usage: ResponsesUsage | null;
}

export interface ResponseState {
  status: ResponseObjectStatus;
  output: ResponsesOutputItem[];
  usage: ResponsesUsage | null;
  incompleteDetails?: { reason: IncompleteReason } | null;
  error?: { code: string; message: string } | null;
  completedAt?: number | null;
}

export function createResponseId(requestId: string): string {
  return `resp_${requestId}`;
}

export function createResponseObject(
  context: EncodeContext,
  echo: ResponseEcho,
  state: ResponseState,
): ResponseObject {
  return {
    id: createResponseId(context.requestId),
    object: "response",
    created_at: context.createdAt,
    status: state.status,
    completed_at: state.completedAt ?? null,
    error: state.error ?? null,
    incomplete_details: state.incompleteDetails ?? null,
    model: context.model,
    output: state.output,
    usage: state.usage,
    ...echo,
  };
}

export function createResponseEcho(request: CanonicalRequest | undefined): ResponseEcho {
  const echo: ResponseEcho = {
    frequency_penalty: null,
    presence_penalty: null,
    instructions: null,
    max_output_tokens: null,
    parallel_tool_calls: true,
    previous_response_id: null,
    reasoning: { effort: null, summary: null },
    store: false,
    temperature: null,
    text: { format: { type: "text" } },
    tool_choice: "auto",
    tools: [],
    top_p: null,
    truncation: "disabled",
    metadata: {},
  };
  if (request === undefined) return echo;
  // The canonical system prompt merges `instructions` with system/developer input messages.
  const instructions = request.system.map((part) => part.text).join("\n\n");
  if (instructions !== "") echo.instructions = instructions;
  if (request.maxOutputTokens !== undefined) echo.max_output_tokens = request.maxOutputTokens;
  if (request.parallelToolCalls !== undefined) echo.parallel_tool_calls = request.parallelToolCalls;
  if (request.reasoning?.effort !== undefined) echo.reasoning.effort = request.reasoning.effort;
  if (request.sampling.temperature !== undefined) echo.temperature = request.sampling.temperature;
  if (request.sampling.topP !== undefined) echo.top_p = request.sampling.topP;
  if (request.sampling.frequencyPenalty !== undefined)
    echo.frequency_penalty = request.sampling.frequencyPenalty;
  if (request.sampling.presencePenalty !== undefined)
    echo.presence_penalty = request.sampling.presencePenalty;
  if (request.responseFormat !== undefined) echo.text.format = encodeTextFormat(request.responseFormat);
  if (request.verbosity !== undefined) echo.text.verbosity = request.verbosity;
  if (request.toolChoice !== undefined) echo.tool_choice = encodeToolChoice(request.toolChoice);
  const carriedChoice = request.extraFields?.find((field) => field.param === "tool_choice");
  if (carriedChoice !== undefined) echo.tool_choice = carriedChoice.value as Record<string, unknown>;
  echo.tools = request.tools.map((tool) => ({
    type: "function",
    name: tool.name,
    description: tool.description ?? null,
    parameters: tool.parameters ?? null,
    strict: tool.strict ?? null,
  }));
  if (request.user !== undefined) echo.user = request.user;
  // `metadata` is not a gateway field; it rides in passthrough and is echoed when it is an object.
  const metadata = request.passthrough.metadata;
  if (typeof metadata === "object" && metadata !== null && !Array.isArray(metadata)) {
    echo.metadata = metadata as Record<string, unknown>;
  }
  return echo;
}

function encodeTextFormat(format: ResponseFormat): ResponsesTextFormat {
  if (format.type !== "json_schema") return { type: format.type };
  const encoded: ResponsesTextFormat = { type: "json_schema", name: format.name, schema: format.schema };
  if (format.strict !== undefined) encoded.strict = format.strict;
  if (format.description !== undefined) encoded.description = format.description;
  return encoded;
}

function encodeToolChoice(choice: ToolChoice): ResponseEcho["tool_choice"] {
  return choice.type === "tool" ? { type: "function", name: choice.name } : choice.type;
}

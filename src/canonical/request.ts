/**
 * The canonical request: every ingress format decodes into this shape and every provider adapter
 * builds its upstream request from it. Types only; this folder imports nothing.
 */

export type ReasoningEffort = "none" | "minimal" | "low" | "medium" | "high" | "xhigh" | "max";

/** Provider-bound opaque reasoning state (signatures, encrypted content). Never shown to users. */
export interface OpaqueReasoningState {
  /** Provider kind that produced it, e.g. `anthropic`, `openai-responses`, `google`. */
  providerKind: string;
  /**
   * Upstream model id that produced it; state is dropped when the next turn goes elsewhere.
   * Empty when unknown (native state a client brought along): then only the kind must match.
   */
  upstreamModel: string;
  signature?: string;
  redactedData?: string;
  encryptedContent?: string;
  itemId?: string;
  /**
   * A content block or output item recording a server tool the provider ran itself (JSON text, as
   * the provider sent it: Anthropic's `server_tool_use` and `*_tool_result` blocks with their
   * encrypted content, OpenAI's `web_search_call` items). Sent back verbatim when the turn goes on
   * at the same provider and model (a paused turn, a later round of the run); dropped elsewhere.
   */
  nativeBlock?: string;
  /**
   * Set when the state belongs to a tool call rather than to reasoning (Gemini thought signatures
   * ride on function calls). Formats without a slot on their tool-call shape carry such state in a
   * reasoning item / thinking block and re-attach it to this call id on decode.
   */
  toolCallId?: string;
}

export interface CacheControl {
  type: "ephemeral";
  ttl?: string;
}

export type MediaSource = { kind: "url"; url: string } | { kind: "base64"; mediaType: string; data: string };

export interface TextPart {
  type: "text";
  text: string;
  cacheControl?: CacheControl;
}

export interface ImagePart {
  type: "image";
  source: MediaSource;
  detail?: "low" | "high" | "auto";
  cacheControl?: CacheControl;
}

export interface FilePart {
  type: "file";
  source: MediaSource;
  filename?: string;
  title?: string;
  cacheControl?: CacheControl;
  /**
   * The request field the part came from (`messages[0].content[1]`, `input[2].content[0]`), so a
   * file found unreadable after decoding (a PDF without a text layer) is named in the caller's terms.
   */
  param?: string;
}

/**
 * How an OpenAI Responses upstream shaped a tool call beyond a plain `function_call`: `custom`, a
 * call of a freeform (`custom`) tool, whose input is text; `namespace`, the tool group (Codex's
 * `multi_agent_v1`) the called tool belongs to. A custom call's `arguments` are `{"input": <text>}`,
 * so every format can show it as a function call; the Responses format gives it back its own shape.
 */
export interface ResponsesCallShape {
  custom?: true;
  namespace?: string;
}

export interface ToolCallPart extends ResponsesCallShape {
  type: "tool-call";
  id: string;
  name: string;
  /** JSON text of the arguments, kept byte-exact. */
  arguments: string;
  providerState?: OpaqueReasoningState;
  /** Prompt-cache breakpoint (Claude Code puts them on tool_use and tool_result blocks). */
  cacheControl?: CacheControl;
}

export interface ToolResultPart {
  type: "tool-result";
  toolCallId: string;
  content: Array<TextPart | ImagePart>;
  isError?: boolean;
  cacheControl?: CacheControl;
  /**
   * Blocks of the result the canonical form has no part for (Claude Code's `tool_reference`), each
   * with its index among the result's blocks as the caller sent them.
   */
  extraBlocks?: VerbatimBlock[];
}

/**
 * A block of a type the canonical form has no part for, kept as the caller sent it for an upstream
 * of its wire family; `index` is its place among the kept parts and the other verbatim blocks of
 * the same list (the blocks a caller sent, minus those the decoder dropped).
 */
export interface VerbatimBlock extends WireExtra {
  index: number;
  block: Record<string, unknown> & { type: string };
}

/** The upstream wire formats, named as the ingress formats that speak them. */
export type WireFamily = "chat_completions" | "responses" | "anthropic_messages";

/**
 * Something of the caller's request the canonical form has no place for (a field, block or tool
 * type newer than the gateway's vocabulary): an upstream of the same wire family gets it verbatim,
 * every other one goes without it and the loss is reported (`X-Hi-Dropped`, the record's
 * `dropped`), or refused in strict mode.
 */
export interface WireExtra extends LostPart {
  family: WireFamily;
}

/** A part of the request a route goes without, as the drop report names it: `tools[4](namespace)`. */
export interface LostPart {
  /** The request field it came from: `tools[4]`, `thinking.display`. */
  param: string;
  /** What it is, when the field alone does not say: the tool or block type. */
  kind?: string;
}

/** A field at `path` of the upstream body, set there when the body has the object that holds it. */
export interface ExtraField extends WireExtra {
  path: string[];
  value: unknown;
}

export interface ReasoningPart {
  type: "reasoning";
  text: string;
  providerState?: OpaqueReasoningState;
}

/**
 * A server tool the provider ran itself, in the assistant turn where it happened: only its provider
 * state (`nativeBlock`), which the adapter of that provider re-sends and every other adapter drops.
 */
export interface NativeToolPart {
  type: "native-tool";
  providerState: OpaqueReasoningState;
}

export type UserContentPart = TextPart | ImagePart | FilePart;
export type AssistantContentPart = TextPart | ToolCallPart | ReasoningPart | NativeToolPart;

/**
 * `extraBlocks` on a user or assistant turn: its blocks of types the gateway does not know (a
 * Messages `search_result`), placed by index among `content` for an upstream of their family. A turn
 * may have only those; an adapter of another family then leaves the turn out.
 */
export type CanonicalMessage =
  | { role: "user"; content: UserContentPart[]; name?: string; extraBlocks?: VerbatimBlock[] }
  | { role: "assistant"; content: AssistantContentPart[]; name?: string; extraBlocks?: VerbatimBlock[] }
  | { role: "tool"; content: ToolResultPart[] };

export interface FunctionTool {
  name: string;
  description?: string;
  /** JSON Schema object of the arguments. */
  parameters?: Record<string, unknown>;
  strict?: boolean;
  cacheControl?: CacheControl;
  /** The request field it came from (`tools[3]`), so a refusal names it in the caller's terms. */
  param?: string;
  /** Fields of the tool the canonical form has no place for (Claude Code's `defer_loading`). */
  extraFields?: WireExtra & { fields: Record<string, unknown> };
}

export type ToolChoice =
  | { type: "auto" }
  | { type: "none" }
  | { type: "required" }
  | { type: "tool"; name: string };

export type ResponseFormat =
  | { type: "text" }
  | { type: "json_object" }
  | {
      type: "json_schema";
      name: string;
      schema: Record<string, unknown>;
      strict?: boolean;
      description?: string;
    };

export type ServerToolId = "web_search" | "web_fetch" | "pdf" | "datetime" | "image";

/** The server tools a provider may run itself (`engine: "native"`). */
export type NativeServerToolId = Extract<ServerToolId, "web_search" | "web_fetch">;

/**
 * A server tool the upstream runs itself in one call: the activation's options in one vocabulary,
 * which each adapter writes in its provider's form. Options the provider has no field for are left
 * out (as the gateway's own search backends leave out a location they cannot express), except
 * domain lists: the engine sends a tool natively only to a provider that applies them.
 */
export interface NativeServerTool {
  tool: NativeServerToolId;
  /** The most calls the upstream may make in this call (at least 1). */
  maxUses: number;
  allowedDomains?: string[];
  blockedDomains?: string[];
  userLocation?: { city?: string; region?: string; country?: string; timezone?: string };
  searchContextSize?: "low" | "medium" | "high";
  /** web_fetch: the most tokens of one page the model reads. */
  maxContentTokens?: number;
}

export interface ServerToolActivation {
  id: ServerToolId;
  maxUses: number;
  events: boolean;
  parameters?: Record<string, unknown>;
  /**
   * The request field that activated it first (`plugins[0]`, `tools[2]`, `web_search_options`),
   * so an activation refused after decoding (a tool not configured here, a malformed option) is
   * named in the caller's terms.
   */
  param?: string;
  /**
   * Activated only by the client's tool list (`tools`, `web_search_options`), never by `plugins`:
   * a client's default (Codex lists `web_search` on every request) rather than what the caller
   * asked this gateway for. When the gateway cannot run it, it runs at the route's provider where
   * that has the tool, else the route goes without it (reported; refused in strict mode).
   */
  optional?: boolean;
}

export interface SamplingOptions {
  temperature?: number;
  topP?: number;
  topK?: number;
  minP?: number;
  topA?: number;
  frequencyPenalty?: number;
  presencePenalty?: number;
  repetitionPenalty?: number;
  seed?: number;
  logitBias?: Record<string, number>;
  logprobs?: boolean;
  topLogprobs?: number;
}

export interface ReasoningOptions {
  effort?: ReasoningEffort;
  /** Explicit thinking budget in tokens (messages-format `thinking.budget_tokens`). */
  budgetTokens?: number;
  /** false when the caller explicitly disabled reasoning. */
  enabled?: boolean;
}

export interface CanonicalRequest {
  /** Catalog model slug `<creator>/<model>`. */
  model: string;
  /**
   * Alternatives the caller named (`models: [...]` beside `model`), tried in order after the
   * requested model's own routes when those fail before any output.
   */
  models?: string[];
  system: TextPart[];
  messages: CanonicalMessage[];
  tools: FunctionTool[];
  toolChoice?: ToolChoice;
  parallelToolCalls?: boolean;
  /** Caller's output cap; undefined means "the model's maximum output". */
  maxOutputTokens?: number;
  sampling: SamplingOptions;
  stop?: string[];
  responseFormat?: ResponseFormat;
  reasoning?: ReasoningOptions;
  verbosity?: string;
  serverTools: ServerToolActivation[];
  /** `hi_tool_events`: every activated tool streams `hi.tool_event` frames. */
  toolEvents: boolean;
  /** Responses `max_tool_calls`: the most server-tool calls the run may execute in all. */
  maxToolCalls?: number;
  /**
   * The server tools the upstream runs itself in this call. Set by the engine per route and round
   * (never by a decoder); their gateway function definitions are then not in `tools`.
   */
  nativeServerTools?: NativeServerTool[];
  user?: string;
  stream: boolean;
  /**
   * `anthropic-beta` values the caller sent (messages format). Forwarded only to upstreams of kind
   * `anthropic`; ignored on translated paths.
   */
  anthropicBeta?: string[];
  /** Caller metadata (messages format `metadata`); adapters forward what their upstream accepts. */
  metadata?: Record<string, unknown>;
  /**
   * Unknown top-level fields of the ingress body, forwarded verbatim to upstreams that speak a
   * compatible wire format.
   */
  passthrough: Record<string, unknown>;
  /**
   * The wire format `passthrough` came from. Adapters forward it only to an upstream speaking that
   * same format (a Responses `include` means nothing to — and is rejected by — a Chat Completions
   * host). Unset: forward (requests built in code, tests).
   */
  passthroughFormat?: WireFamily;
  /** Tools of types the canonical form has no place for (Codex's `namespace`), verbatim. */
  extraTools?: Array<WireExtra & { tool: Record<string, unknown> }>;
  /** Nested fields the canonical form has no place for (`thinking.display`). */
  extraFields?: ExtraField[];
  /**
   * What this route's upstream goes without whatever its wire family: a server tool the client
   * listed (not through `plugins`) that neither this gateway nor the route's provider can run. Set
   * by the engine per route (never by a decoder).
   */
  leftOut?: LostPart[];
  /**
   * Strict mode (`X-Hi-Strict: true` or `hi_strict: true`): a route that would leave out anything of
   * the request is not used; the request is refused naming the field instead.
   */
  strict?: boolean;
  /**
   * The exact response cache as the request asked for it (`hi_cache` or `X-Hi-Cache`): a
   * time-to-live in seconds, 0 for "not this request"; unset: the key's or workspace's policy
   * decides (docs/response-cache.md).
   */
  responseCacheTtlSeconds?: number;
  /**
   * Responses format: the caller set `store: false`, so it replays earlier items whole, never as
   * `item_reference`s, and the answer's item ids need not carry their items
   * (ingress/responses/item-seal.ts).
   */
  noItemReferences?: boolean;
}

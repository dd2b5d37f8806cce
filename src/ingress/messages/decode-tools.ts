/**
 * `tools`, `tool_choice` and `plugins` → canonical function tools, tool choice and server-tool
 * activations.
 *
 * A `tools` element is a function tool unless its `type` is one of Anthropic's versioned web_search /
 * web_fetch server tools; those activate the gateway's server tool of the same name (with the
 * tool's non-null options, e.g. `allowed_domains`, as parameters), so clients written for Anthropic's
 * server tools work with every model. They merge with `plugins` exactly as chat-completions merges
 * its sources (decode-server-tools.ts there): tools first, then plugins.
 */
import type {
  CanonicalRequest,
  ExtraField,
  FunctionTool,
  ServerToolActivation,
  ServerToolId,
  ToolChoice,
} from "../../canonical/index.js";
import { GatewayError } from "../../errors/gateway-error.js";
import { decodePluginActivation } from "../chat-completions/decode-server-tools.js";
import type { ChatPluginBody } from "../chat-completions/request-schema.js";
import { type ActivationSource, mergeServerToolActivations } from "../shared/server-tool-activations.js";
import { collectExtraFields, createExtraTool, createExtraToolChoice } from "../shared/wire-extras.js";
import {
  MESSAGES_TOOL_CHOICE_TYPES,
  type MessagesPluginBody,
  type MessagesToolBody,
  type MessagesToolChoiceBody,
  NATIVE_SERVER_TOOL_TYPE_PATTERN,
} from "./request-schema.js";

type CustomToolBody = Extract<MessagesToolBody, { input_schema: unknown }>;
type NativeServerToolBody = Extract<MessagesToolBody, { max_uses?: unknown }>;

/** The fields of a custom tool the gateway reads; any other goes to Anthropic routes as it came. */
const CUSTOM_TOOL_FIELDS: ReadonlySet<string> = new Set([
  "type",
  "name",
  "description",
  "input_schema",
  "strict",
  "cache_control",
]);

export interface DecodedToolChoice {
  toolChoice?: ToolChoice;
  /** A choice of another type, or naming a tool of another type: for Anthropic routes as it came. */
  extraToolChoice?: ExtraField;
  /** false when the caller set `disable_parallel_tool_use`; otherwise the upstream default. */
  parallelToolCalls?: boolean;
}

export function decodeFunctionTools(tools: readonly MessagesToolBody[] | null | undefined): FunctionTool[] {
  const functionTools: FunctionTool[] = [];
  for (const [index, tool] of (tools ?? []).entries())
    if (isCustomTool(tool)) functionTools.push(decodeCustomTool(tool, `tools[${index}]`));
  return functionTools;
}

/**
 * Throws `invalid_request` (param `tool_choice.name`) when it names a tool that is not in `tools`.
 * A choice that names a tool of another type (`bash_20250124`), or is of another type itself, is
 * carried for Anthropic routes as it came (`extraToolChoice`).
 */
export function decodeToolChoice(
  choice: MessagesToolChoiceBody | null | undefined,
  functionTools: readonly FunctionTool[],
  verbatimTools: readonly { tool: Record<string, unknown> }[] = [],
): DecodedToolChoice {
  if (choice === null || choice === undefined) return {};
  const decoded: DecodedToolChoice = {};
  if (!isKnownToolChoice(choice)) return carriedAsItCame(choice);
  switch (choice.type) {
    case "auto":
    case "none":
      decoded.toolChoice = { type: choice.type };
      break;
    case "any":
      decoded.toolChoice = { type: "required" };
      break;
    case "tool":
      if (verbatimTools.some(({ tool }) => tool.name === choice.name)) return carriedAsItCame(choice);
      if (!functionTools.some((tool) => tool.name === choice.name)) {
        throw GatewayError.invalidRequest(
          `tool_choice.name names tool "${choice.name}", which is not in tools`,
          "tool_choice.name",
        );
      }
      decoded.toolChoice = { type: "tool", name: choice.name };
      break;
  }
  if (choice.type !== "none" && choice.disable_parallel_tool_use === true) decoded.parallelToolCalls = false;
  return decoded;
}

function carriedAsItCame(choice: Record<string, unknown> & { type: string }): DecodedToolChoice {
  const decoded: DecodedToolChoice = { extraToolChoice: createExtraToolChoice("anthropic_messages", choice) };
  // The routes that go without the choice still keep calls one at a time, as asked.
  if (choice.disable_parallel_tool_use === true) decoded.parallelToolCalls = false;
  return decoded;
}

type KnownToolChoiceBody = Extract<MessagesToolChoiceBody, { type: "auto" | "any" | "tool" | "none" }>;

function isKnownToolChoice(choice: MessagesToolChoiceBody): choice is KnownToolChoiceBody {
  return MESSAGES_TOOL_CHOICE_TYPES.has(choice.type);
}

/**
 * Tools of types the gateway has no vocabulary for (`bash_20250124`, `mcp_toolset`, …): for
 * Anthropic routes, as they came.
 */
export function decodeVerbatimTools(tools: readonly MessagesToolBody[] | null | undefined) {
  const extras: NonNullable<CanonicalRequest["extraTools"]> = [];
  for (const [index, tool] of (tools ?? []).entries()) {
    if (!isCustomTool(tool) && !isNativeServerTool(tool))
      extras.push(
        createExtraTool("anthropic_messages", index, tool as Record<string, unknown> & { type: string }),
      );
  }
  return extras;
}

export function decodeMessagesServerTools(
  tools: readonly MessagesToolBody[] | null | undefined,
  plugins: readonly MessagesPluginBody[] | null | undefined,
): ServerToolActivation[] {
  const sources: ActivationSource[] = [];
  for (const [index, tool] of (tools ?? []).entries())
    if (isNativeServerTool(tool))
      sources.push(decodePluginActivation(convertNativeServerTool(tool), `tools[${index}]`));
  for (const [index, plugin] of (plugins ?? []).entries())
    sources.push(decodePluginActivation(plugin, `plugins[${index}]`));
  return mergeServerToolActivations(sources);
}

function isCustomTool(tool: MessagesToolBody): tool is CustomToolBody {
  return tool.type === undefined || tool.type === "custom";
}

function isNativeServerTool(tool: MessagesToolBody): tool is NativeServerToolBody {
  return typeof tool.type === "string" && NATIVE_SERVER_TOOL_TYPE_PATTERN.test(tool.type);
}

function decodeCustomTool(tool: CustomToolBody, param: string): FunctionTool {
  const decoded: FunctionTool = { name: tool.name, parameters: tool.input_schema, param };
  const extraFields = collectExtraFields("anthropic_messages", param, tool, CUSTOM_TOOL_FIELDS);
  if (extraFields !== undefined) decoded.extraFields = extraFields;
  if (typeof tool.description === "string") decoded.description = tool.description;
  if (typeof tool.strict === "boolean") decoded.strict = tool.strict;
  if (tool.cache_control !== null && tool.cache_control !== undefined) {
    const { type, ttl } = tool.cache_control;
    decoded.cacheControl = ttl === undefined ? { type } : { type, ttl };
  }
  return decoded;
}

/** `{type: "web_search_20250305", name, max_uses, allowed_domains: null, …}` → a plugin entry. */
function convertNativeServerTool(tool: NativeServerToolBody): ChatPluginBody {
  const { type, name: _name, max_uses: maxUses, cache_control: _cacheControl, ...options } = tool;
  const id = NATIVE_SERVER_TOOL_TYPE_PATTERN.exec(type)![1] as ServerToolId;
  const plugin: ChatPluginBody = { id };
  // SDKs serialise unset options as null (pydantic-ai does); null means "not set", not a value.
  for (const [key, value] of Object.entries(options))
    if (value !== null && value !== undefined) plugin[key] = value;
  if (typeof maxUses === "number") plugin.max_uses = maxUses;
  return plugin;
}

/**
 * Function tools of `tools`, and `tool_choice`. A `tools` element is a function tool when its
 * `type` is `function`; every other element is a server-tool activation (decode-server-tools.ts).
 */
import type { CanonicalRequest, ExtraField, FunctionTool, ToolChoice } from "../../canonical/index.js";
import { missingToolChoiceTarget } from "../shared/tool-choice-target.js";
import { collectExtraFields, createExtraTool, createExtraToolChoice } from "../shared/wire-extras.js";
import {
  type ChatServerToolActivationBody,
  type ChatToolBody,
  type ChatToolChoiceBody,
  isKnownChatToolType,
} from "./request-schema.js";

type FunctionToolChoiceBody = { type: "function"; function: { name: string } };

export type FunctionToolBody = Extract<ChatToolBody, { type: "function" }>;
export type ServerToolActivationBody = ChatServerToolActivationBody;

export function isFunctionTool(tool: ChatToolBody): tool is FunctionToolBody {
  return tool.type === "function";
}

/** A server-tool activation (`<vendor>:<tool>`, the schema's second variant). */
export function isServerToolActivation(tool: ChatToolBody): tool is ChatServerToolActivationBody {
  return tool.type !== "function" && isKnownChatToolType(tool.type);
}

/** Tools of types the gateway has no vocabulary for (`custom`): for Chat Completions routes, as they came. */
export function decodeVerbatimTools(tools: readonly ChatToolBody[] | null | undefined) {
  const extras: NonNullable<CanonicalRequest["extraTools"]> = [];
  for (const [index, tool] of (tools ?? []).entries())
    if (!isKnownChatToolType(tool.type)) extras.push(createExtraTool("chat_completions", index, tool));
  return extras;
}

export function decodeFunctionTools(tools: readonly ChatToolBody[] | null | undefined): FunctionTool[] {
  const functionTools: FunctionTool[] = [];
  for (const [index, tool] of (tools ?? []).entries())
    if (isFunctionTool(tool)) functionTools.push(decodeFunctionTool(tool, `tools[${index}]`));
  return functionTools;
}

/**
 * Throws `invalid_request` when it names a function that is not in `tools`: param `tool_choice`, or
 * `tools[i].type` when a tool of another type carries that name. A choice of another type
 * (`allowed_tools`, `custom`, …) is an extra field, for routes of this format as it came.
 */
export function decodeToolChoice(
  choice: ChatToolChoiceBody | null | undefined,
  functionTools: readonly FunctionTool[],
  rawTools?: readonly ChatToolBody[] | null,
): ToolChoice | ExtraField | undefined {
  if (choice === null || choice === undefined) return undefined;
  if (typeof choice === "string") return { type: choice };
  if (choice.type !== "function") return createExtraToolChoice("chat_completions", choice);
  const { name } = (choice as FunctionToolChoiceBody).function;
  if (!functionTools.some((tool) => tool.name === name)) {
    throw missingToolChoiceTarget(name, rawTools, functionNameOf, {
      message: `tool_choice names function "${name}", which is not in tools`,
      param: "tool_choice",
    });
  }
  return { type: "tool", name };
}

function functionNameOf(tool: Record<string, unknown>): unknown {
  const fn = tool.function;
  return typeof fn === "object" && fn !== null ? (fn as Record<string, unknown>).name : undefined;
}

/** The fields of a `function` object the canonical tool has a place for. */
const FUNCTION_FIELDS: ReadonlySet<string> = new Set(["name", "description", "parameters", "strict"]);

function decodeFunctionTool(tool: FunctionToolBody, param: string): FunctionTool {
  const { name, description, parameters, strict } = tool.function;
  const decoded: FunctionTool = { name, param };
  if (typeof description === "string") decoded.description = description;
  if (parameters !== null && parameters !== undefined) decoded.parameters = parameters;
  if (typeof strict === "boolean") decoded.strict = strict;
  // Newer fields of `function` go into it on Chat Completions routes; elsewhere they are reported.
  const extraFields = collectExtraFields(
    "chat_completions",
    `${param}.function`,
    tool.function,
    FUNCTION_FIELDS,
  );
  if (extraFields !== undefined) decoded.extraFields = extraFields;
  return decoded;
}

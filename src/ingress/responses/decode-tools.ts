/**
 * Function tools of `tools` (the flat responses shape), and `tool_choice`. A `tools` element is a
 * function tool when its `type` is `function`; every other element is a server-tool activation
 * (decode-server-tools.ts).
 */
import type { CanonicalRequest, ExtraField, FunctionTool, ToolChoice } from "../../canonical/index.js";
import { missingToolChoiceTarget } from "../shared/tool-choice-target.js";
import { collectExtraFields, createExtraTool, createExtraToolChoice } from "../shared/wire-extras.js";
import {
  isKnownResponsesToolType,
  type ResponsesServerToolBody,
  type ResponsesToolBody,
  type ResponsesToolChoiceBody,
} from "./request-schema.js";

export type FunctionToolBody = Extract<ResponsesToolBody, { type: "function" }>;
export type ServerToolBody = ResponsesServerToolBody;

/** The fields of a function tool the gateway reads; any other goes to Responses routes as it came. */
const FUNCTION_TOOL_FIELDS: ReadonlySet<string> = new Set([
  "type",
  "name",
  "description",
  "parameters",
  "strict",
]);

export function isFunctionTool(tool: ResponsesToolBody): tool is FunctionToolBody {
  return tool.type === "function";
}

/** A tool of a type the gateway has no vocabulary for (the schema's third variant). */
export function isVerbatimTool(tool: ResponsesToolBody): boolean {
  return !isKnownResponsesToolType(tool.type);
}

/** A server tool the gateway runs (the schema's second variant). */
export function isServerTool(tool: ResponsesToolBody): tool is ResponsesServerToolBody {
  return !isFunctionTool(tool) && !isVerbatimTool(tool);
}

/** Tools of types the gateway has no vocabulary for (`namespace`, `custom`, …): for Responses routes. */
export function decodeVerbatimTools(tools: readonly ResponsesToolBody[] | null | undefined) {
  const extras: NonNullable<CanonicalRequest["extraTools"]> = [];
  for (const [index, tool] of (tools ?? []).entries())
    if (isVerbatimTool(tool)) extras.push(createExtraTool("responses", index, tool));
  return extras;
}

export function decodeFunctionTools(tools: readonly ResponsesToolBody[] | null | undefined): FunctionTool[] {
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
  choice: ResponsesToolChoiceBody | null | undefined,
  functionTools: readonly FunctionTool[],
  rawTools?: readonly ResponsesToolBody[] | null,
): ToolChoice | ExtraField | undefined {
  if (choice === null || choice === undefined) return undefined;
  if (typeof choice === "string") return { type: choice };
  if (choice.type !== "function") return createExtraToolChoice("responses", choice);
  const { name } = choice as { type: "function"; name: string };
  if (!functionTools.some((tool) => tool.name === name)) {
    throw missingToolChoiceTarget(name, rawTools, (tool) => tool.name, {
      message: `tool_choice names function "${name}", which is not in tools`,
      param: "tool_choice",
    });
  }
  return { type: "tool", name };
}

function decodeFunctionTool(tool: FunctionToolBody, param: string): FunctionTool {
  const decoded: FunctionTool = { name: tool.name, param };
  const extraFields = collectExtraFields("responses", param, tool, FUNCTION_TOOL_FIELDS);
  if (extraFields !== undefined) decoded.extraFields = extraFields;
  if (typeof tool.description === "string") decoded.description = tool.description;
  if (tool.parameters !== null && tool.parameters !== undefined) decoded.parameters = tool.parameters;
  if (typeof tool.strict === "boolean") decoded.strict = tool.strict;
  return decoded;
}

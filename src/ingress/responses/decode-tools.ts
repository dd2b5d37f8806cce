/**
 * Function tools of `tools` (the flat responses shape), and `tool_choice`. A `tools` element is a
 * function tool when its `type` is `function`; every other element is a server-tool activation
 * (decode-server-tools.ts).
 */
import type { FunctionTool, ToolChoice } from "../../canonical/index.js";
import { GatewayError } from "../../errors/gateway-error.js";
import type { ResponsesToolBody, ResponsesToolChoiceBody } from "./request-schema.js";

export type FunctionToolBody = Extract<ResponsesToolBody, { type: "function" }>;
export type ServerToolBody = Exclude<ResponsesToolBody, FunctionToolBody>;

export function isFunctionTool(tool: ResponsesToolBody): tool is FunctionToolBody {
  // Sound because the schema only lets server-tool types through for the other variant.
  return tool.type === "function";
}

export function decodeFunctionTools(tools: readonly ResponsesToolBody[] | null | undefined): FunctionTool[] {
  const functionTools: FunctionTool[] = [];
  for (const [index, tool] of (tools ?? []).entries())
    if (isFunctionTool(tool)) functionTools.push(decodeFunctionTool(tool, `tools[${index}]`));
  return functionTools;
}

/** Throws `invalid_request` (param `tool_choice`) when it names a function that is not in `tools`. */
export function decodeToolChoice(
  choice: ResponsesToolChoiceBody | null | undefined,
  functionTools: readonly FunctionTool[],
): ToolChoice | undefined {
  if (choice === null || choice === undefined) return undefined;
  if (typeof choice === "string") return { type: choice };
  if (!functionTools.some((tool) => tool.name === choice.name)) {
    throw GatewayError.invalidRequest(
      `tool_choice names function "${choice.name}", which is not in tools`,
      "tool_choice",
    );
  }
  return { type: "tool", name: choice.name };
}

function decodeFunctionTool(tool: FunctionToolBody, param: string): FunctionTool {
  const decoded: FunctionTool = { name: tool.name, param };
  if (typeof tool.description === "string") decoded.description = tool.description;
  if (tool.parameters !== null && tool.parameters !== undefined) decoded.parameters = tool.parameters;
  if (typeof tool.strict === "boolean") decoded.strict = tool.strict;
  return decoded;
}

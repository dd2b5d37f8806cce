/**
 * Canonical tools, tool choice and response format → Anthropic `tools`, `tool_choice` and
 * `output_config.format`.
 *
 * Structured output (`json_schema` / `json_object`) is emulated with a forced tool whose input
 * schema is the requested schema; the parsers turn that tool's input back into answer TEXT with
 * finish `stop`. The emulation works on every tool-capable Claude model and accepts any JSON
 * Schema, whereas the native `output_config.format` exists on newer models only and restricts the
 * schema dialect. With caller tools present the choice becomes `any`, so the model may still call
 * a real tool first and answers through the JSON tool at the end; parallel calls are disabled so
 * the answer is one coherent call.
 *
 * Thinking forbids forced tool use, so with thinking on a `json_schema` format goes native
 * (`output_config.format`; the answer is then plain text JSON and the upstream itself refuses
 * models without support), and `json_object`, which has no schema to give it, is refused.
 * A caller's own forced tool choice with thinking on is refused as well (naming `tool_choice`).
 *
 * Tool `strict` is not forwarded: Anthropic accepts it only on models with structured outputs and
 * rejects the whole request elsewhere, while OpenAI clients set it routinely.
 */
import type { CanonicalRequest, FunctionTool, ToolChoice } from "../../canonical/index.js";
import { GatewayError } from "../../errors/gateway-error.js";
import { withCacheControl } from "./convert-media.js";
import type { AnthropicTool, AnthropicToolChoice } from "./wire-types.js";

export const JSON_RESPONSE_TOOL_NAME = "json_response";

export interface AnthropicToolSetup {
  tools?: AnthropicTool[];
  toolChoice?: AnthropicToolChoice;
  /** Native structured-output format (`output_config.format`), used only with thinking on. */
  outputFormat?: { type: "json_schema"; schema: Record<string, unknown> };
  /** Name of the structured-output tool whose input is the answer text, when emulating. */
  jsonToolName?: string;
}

export function convertToolSetup(
  request: CanonicalRequest,
  options: { thinking: boolean },
): AnthropicToolSetup {
  const tools = request.tools.map(convertTool);
  const format = request.responseFormat;
  const setup: AnthropicToolSetup = {};
  let toolChoice: AnthropicToolChoice | undefined =
    request.toolChoice === undefined ? undefined : convertToolChoice(request.toolChoice);

  if (format !== undefined && format.type !== "text") {
    if (options.thinking) {
      if (format.type === "json_object") {
        throw GatewayError.invalidRequest(
          "A json_object response format cannot be combined with reasoning on this model; " +
            "send a json_schema response format or turn reasoning off",
          "response_format",
        );
      }
      setup.outputFormat = { type: "json_schema", schema: format.schema };
    } else {
      const name = pickJsonToolName(request.tools);
      setup.jsonToolName = name;
      tools.push({
        name,
        description:
          format.type === "json_schema"
            ? (format.description ?? `Answer with a JSON object following the "${format.name}" schema.`)
            : "Answer with a JSON object.",
        input_schema: format.type === "json_schema" ? format.schema : { type: "object" },
      });
      toolChoice = chooseWithJsonTool(request.toolChoice, request.tools.length > 0, name);
    }
  } else if (toolChoice !== undefined && toolChoice.type !== "none" && request.parallelToolCalls === false) {
    toolChoice.disable_parallel_tool_use = true;
  } else if (toolChoice === undefined && request.parallelToolCalls === false) {
    toolChoice = { type: "auto", disable_parallel_tool_use: true };
  }

  // Anthropic refuses `tool_choice` without tools.
  if (tools.length === 0) return setup;
  if (options.thinking && (toolChoice?.type === "any" || toolChoice?.type === "tool")) {
    throw GatewayError.invalidRequest(
      "Reasoning cannot be combined with a tool_choice that forces tool use on this model; " +
        'use "auto" or "none", or turn reasoning off',
      "tool_choice",
    );
  }
  setup.tools = tools;
  if (toolChoice !== undefined) setup.toolChoice = toolChoice;
  return setup;
}

/** A Messages caller's own extra tool fields (`defer_loading`) go as they came. */
export function convertTool(tool: FunctionTool): AnthropicTool {
  const extra = tool.extraFields?.family === "anthropic_messages" ? tool.extraFields.fields : {};
  return {
    name: tool.name,
    ...(tool.description === undefined || tool.description === "" ? {} : { description: tool.description }),
    input_schema: tool.parameters ?? { type: "object" },
    ...withCacheControl(tool.cacheControl),
    ...extra,
  };
}

export function convertToolChoice(choice: ToolChoice): AnthropicToolChoice {
  switch (choice.type) {
    case "auto":
      return { type: "auto" };
    case "none":
      return { type: "none" };
    case "required":
      return { type: "any" };
    case "tool":
      return { type: "tool", name: choice.name };
  }
}

/**
 * The choice that makes the model answer through the JSON tool: forced outright when it is the
 * only usable tool, `any` when caller tools may run first; a caller forcing one of its own tools
 * keeps that (this turn is that call).
 */
function chooseWithJsonTool(
  choice: ToolChoice | undefined,
  hasCallerTools: boolean,
  name: string,
): AnthropicToolChoice {
  if (choice?.type === "tool") return { type: "tool", name: choice.name, disable_parallel_tool_use: true };
  if (hasCallerTools && choice?.type !== "none") return { type: "any", disable_parallel_tool_use: true };
  return { type: "tool", name, disable_parallel_tool_use: true };
}

/** `json_response`, or `json_response_2`, … when a caller tool already has the name. */
function pickJsonToolName(tools: FunctionTool[]): string {
  const taken = new Set(tools.map((tool) => tool.name));
  let name = JSON_RESPONSE_TOOL_NAME;
  for (let suffix = 2; taken.has(name); suffix += 1) name = `${JSON_RESPONSE_TOOL_NAME}_${suffix}`;
  return name;
}

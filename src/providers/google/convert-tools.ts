/** Canonical tools and tool choice → Gemini `tools[].functionDeclarations` and `toolConfig`. */
import type { FunctionTool, NativeServerTool, ToolChoice } from "../../canonical/index.js";
import { cleanSchemaForGemini, createSchemaBudget } from "./clean-schema.js";
import type { GeminiFunctionDeclaration, GeminiToolConfig } from "./wire-types.js";

/**
 * All functions go in one `tools` entry (the API's own shape for several declarations). A tool
 * without parameters gets no `parameters` at all: an OBJECT schema with empty `properties` is a
 * 400 ("should be non-empty for OBJECT type") on Gemini models before 2.5.
 */
export function convertTools(
  tools: FunctionTool[],
  cleanedParameters: Array<Record<string, unknown> | undefined> = cleanAll(tools),
): Array<{ functionDeclarations: GeminiFunctionDeclaration[] }> {
  if (tools.length === 0) return [];
  const functionDeclarations = tools.map((tool, index): GeminiFunctionDeclaration => {
    const parameters = cleanedParameters[index];
    return {
      name: tool.name,
      ...(tool.description === undefined ? {} : { description: tool.description }),
      ...(parameters?.properties === undefined ? {} : { parameters: withObjectType(parameters) }),
    };
  });
  return [{ functionDeclarations }];
}

/** The schema with `type: "object"`, where its own `type` stood or else after its other keys. */
function withObjectType(schema: Record<string, unknown>): Record<string, unknown> {
  const typed = { ...schema };
  typed.type = "object";
  return typed;
}

/** Each tool's parameters cleaned on their own budget (the request builder passes its own). */
function cleanAll(tools: FunctionTool[]): Array<Record<string, unknown> | undefined> {
  const budget = createSchemaBudget();
  return tools.map((tool) =>
    tool.parameters === undefined ? undefined : cleanSchemaForGemini(tool.parameters, { budget }),
  );
}

/**
 * The tools Gemini runs itself: web_search is `googleSearch`, web_fetch `urlContext`. Neither takes
 * a call limit, a location or the gateway's domain lists (the engine sends no lists here).
 */
export function convertNativeTools(
  tools: readonly NativeServerTool[] | undefined,
): Array<{ googleSearch: Record<string, never> } | { urlContext: Record<string, never> }> {
  return (tools ?? []).map((tool) =>
    tool.tool === "web_search" ? { googleSearch: {} } : { urlContext: {} },
  );
}

/**
 * `auto`/`none`/`required` → AUTO/NONE/ANY; forcing one tool is ANY restricted to that name.
 * Without tools there is nothing to configure (and NONE is already what happens).
 */
export function convertToolChoice(
  choice: ToolChoice | undefined,
  hasTools: boolean,
): GeminiToolConfig | undefined {
  if (choice === undefined || !hasTools) return undefined;
  switch (choice.type) {
    case "auto":
      return { functionCallingConfig: { mode: "AUTO" } };
    case "none":
      return { functionCallingConfig: { mode: "NONE" } };
    case "required":
      return { functionCallingConfig: { mode: "ANY" } };
    case "tool":
      return { functionCallingConfig: { mode: "ANY", allowedFunctionNames: [choice.name] } };
  }
}

/** Canonical tools, tool choice and response format → their Responses shapes (all flat). */
import type { FunctionTool, NativeServerTool, ResponseFormat, ToolChoice } from "../../canonical/index.js";
import type {
  ResponsesFunctionTool,
  ResponsesTextFormat,
  ResponsesToolChoice,
  ResponsesWebSearchTool,
} from "./wire-types.js";

/** An object schema that accepts no arguments, for tools declared without parameters. */
const EMPTY_PARAMETERS = { type: "object", properties: {} };

/**
 * Flat `{type:"function", name, …}` tools. Responses treats a missing `strict` as true, which
 * rejects every schema that is not strict-compatible; Chat and Messages treat it as false. The
 * caller's absence of `strict` therefore goes upstream as `strict: false`.
 */
export function convertTools(tools: FunctionTool[]): ResponsesFunctionTool[] {
  return tools.map((tool) => ({
    type: "function",
    name: tool.name,
    ...(tool.description === undefined ? {} : { description: tool.description }),
    parameters: tool.parameters ?? EMPTY_PARAMETERS,
    strict: tool.strict ?? false,
    // A Responses caller's own extra tool fields (`defer_loading`) go as they came.
    ...(tool.extraFields?.family === "responses" ? tool.extraFields.fields : {}),
  }));
}

/**
 * The web search OpenAI runs itself: its allowed domains (it takes no blocked list, so the engine
 * sends none here), context size and location. OpenAI has no per-tool call limit: the request's
 * `max_tool_calls` bounds the calls (build-request.ts).
 */
export function convertNativeTools(tools: readonly NativeServerTool[] | undefined): ResponsesWebSearchTool[] {
  return (tools ?? []).flatMap((tool): ResponsesWebSearchTool[] => {
    if (tool.tool !== "web_search") return [];
    const converted: ResponsesWebSearchTool = { type: "web_search" };
    if (tool.allowedDomains !== undefined && tool.allowedDomains.length > 0) {
      converted.filters = { allowed_domains: tool.allowedDomains };
    }
    if (tool.searchContextSize !== undefined) converted.search_context_size = tool.searchContextSize;
    if (tool.userLocation !== undefined)
      converted.user_location = { type: "approximate", ...tool.userLocation };
    return [converted];
  });
}

export function convertToolChoice(choice: ToolChoice): ResponsesToolChoice {
  switch (choice.type) {
    case "auto":
    case "none":
    case "required":
      return choice.type;
    case "tool":
      return { type: "function", name: choice.name };
  }
}

/** `text.format`: the JSON schema fields sit beside `type`, not under `json_schema` as in Chat. */
export function convertTextFormat(format: ResponseFormat): ResponsesTextFormat {
  if (format.type !== "json_schema") return { type: format.type };
  return {
    type: "json_schema",
    name: format.name,
    schema: format.schema,
    ...(format.strict === undefined ? {} : { strict: format.strict }),
    ...(format.description === undefined ? {} : { description: format.description }),
  };
}

import type { FunctionTool, ResponseFormat, ToolChoice } from "../../canonical/index.js";
import type { ChatResponseFormat, ChatTool, ChatToolChoice } from "./wire-types.js";

/**
 * Canonical tools → Chat's nested `{type:"function", function:{…}}` shape (not Responses' flat one).
 * Fields a Chat caller set on `function` that the gateway has no vocabulary for go back into it.
 */
export function convertTools(tools: FunctionTool[]): ChatTool[] {
  return tools.map((tool) => ({
    type: "function",
    function: {
      name: tool.name,
      ...(tool.description === undefined ? {} : { description: tool.description }),
      ...(tool.parameters === undefined ? {} : { parameters: tool.parameters }),
      ...(tool.strict === undefined ? {} : { strict: tool.strict }),
      ...(tool.extraFields?.family === "chat_completions" ? tool.extraFields.fields : {}),
    },
  }));
}

export function convertToolChoice(choice: ToolChoice): ChatToolChoice {
  switch (choice.type) {
    case "auto":
    case "none":
    case "required":
      return choice.type;
    case "tool":
      return { type: "function", function: { name: choice.name } };
  }
}

export function convertResponseFormat(format: ResponseFormat): ChatResponseFormat {
  if (format.type !== "json_schema") return { type: format.type };
  return {
    type: "json_schema",
    json_schema: {
      name: format.name,
      schema: format.schema,
      ...(format.strict === undefined ? {} : { strict: format.strict }),
      ...(format.description === undefined ? {} : { description: format.description }),
    },
  };
}

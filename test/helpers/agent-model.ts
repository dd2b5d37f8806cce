/**
 * A fake model for agent CLIs, behind any provider kind's fake upstream: it reads the request in
 * that provider's wire form and answers like a model would, in the same wire form, streamed when
 * the request streams.
 *
 * - The latest user text holds `CALL <tool> <json>` and the request offers that tool, and no tool
 *   result is in the conversation yet: the model calls the tool with those arguments.
 * - A tool result is in the conversation: the model answers `TOOL SAID: <result text>`, so the
 *   CLI's printed answer shows the tool really ran.
 * - Otherwise it answers {@link AGENT_MODEL_TEXT}.
 */
import type { ProviderKind } from "../../src/catalog/types.js";
import type { UpstreamReply, UpstreamRequest } from "./conformance-gateway.js";
import { renderAnswer } from "./scenario-scripts.js";
import { callTools } from "./scripted-tool-model.js";

// biome-ignore lint/suspicious/noExplicitAny: upstream wire bodies are read field by field.
type Json = any;

export const AGENT_MODEL_TEXT = "Hello from the loopback model.";
export const TOOL_ANSWER_PREFIX = "TOOL SAID: ";
const USAGE = { input: 20, cached: 0, output: 8, reasoning: 0 };

export function answerAsAgentModel(kind: ProviderKind, request: UpstreamRequest): UpstreamReply {
  const body = request.body ?? {};
  const stream = kind === "google" ? request.path.includes(":streamGenerateContent") : body.stream === true;
  const results = toolResultTexts(kind, body);
  if (results.length > 0) {
    const text = `${TOOL_ANSWER_PREFIX}${results.join("\n").slice(0, 400)}`;
    return renderAnswer(kind, { text: [text], finish: "stop", usage: USAGE }, { stream });
  }
  const directive = /CALL (\S+) (\{.*\})/s.exec(lastUserText(kind, body));
  if (directive !== null && offeredTools(kind, body).includes(directive[1])) {
    const input = JSON.parse(directive[2]) as Record<string, unknown>;
    const loopKind = kind === "openai-chat" ? "openai-compatible" : kind;
    return callTools(loopKind, [{ name: directive[1], input }], { stream, usage: USAGE });
  }
  return renderAnswer(kind, { text: [AGENT_MODEL_TEXT], finish: "stop", usage: USAGE }, { stream });
}

function textOf(content: Json): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content
    .map((part: Json) => (typeof part?.text === "string" && part.type !== "tool_result" ? part.text : ""))
    .join("\n");
}

function lastUserText(kind: ProviderKind, body: Json): string {
  switch (kind) {
    case "openai-compatible":
    case "openai-chat":
    case "anthropic": {
      const users = (body.messages ?? []).filter((message: Json) => message.role === "user");
      return textOf(users.at(-1)?.content);
    }
    case "openai-responses": {
      if (typeof body.input === "string") return body.input;
      const users = (body.input ?? []).filter((item: Json) => item.role === "user");
      return textOf(users.at(-1)?.content);
    }
    case "google": {
      const users = (body.contents ?? []).filter((content: Json) => content.role === "user");
      return textOf(users.at(-1)?.parts);
    }
  }
}

function resultText(value: Json): string {
  if (typeof value === "string") return value;
  if (Array.isArray(value)) return value.map((part: Json) => resultText(part?.text ?? part)).join("");
  return JSON.stringify(value);
}

function toolResultTexts(kind: ProviderKind, body: Json): string[] {
  switch (kind) {
    case "openai-compatible":
    case "openai-chat":
      return (body.messages ?? [])
        .filter((message: Json) => message.role === "tool")
        .map((message: Json) => resultText(message.content));
    case "openai-responses":
      return (Array.isArray(body.input) ? body.input : [])
        .filter(
          (item: Json) => item.type === "function_call_output" || item.type === "custom_tool_call_output",
        )
        .map((item: Json) => resultText(item.output));
    case "anthropic":
      return (body.messages ?? [])
        .filter((message: Json) => message.role === "user" && Array.isArray(message.content))
        .flatMap((message: Json) => message.content)
        .filter((block: Json) => block.type === "tool_result")
        .map((block: Json) => resultText(block.content ?? ""));
    case "google":
      return (body.contents ?? [])
        .flatMap((content: Json) => content.parts ?? [])
        .filter((part: Json) => part.functionResponse !== undefined)
        .map((part: Json) => {
          // The gateway wraps a result as `{output}` (or `{error}`) for Gemini, which wants an object.
          const response = part.functionResponse.response ?? {};
          return resultText(response.output ?? response.error ?? response);
        });
  }
}

function offeredTools(kind: ProviderKind, body: Json): string[] {
  const tools: Json[] = body.tools ?? [];
  switch (kind) {
    case "openai-compatible":
    case "openai-chat":
      return tools.map((tool) => tool.function?.name ?? tool.name);
    case "openai-responses":
    case "anthropic":
      return tools.map((tool) => tool.name);
    case "google":
      return tools.flatMap((tool) =>
        (tool.functionDeclarations ?? []).map((declaration: Json) => declaration.name),
      );
  }
}

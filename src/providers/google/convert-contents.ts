/**
 * Canonical system + messages → Gemini `systemInstruction` and `contents` (roles user/model).
 *
 * - Empty text parts are never sent; a turn left without parts is dropped, and
 *   consecutive turns of one role are merged (a tool-result turn followed by a user turn becomes
 *   one user turn).
 * - Tool results become one user turn of `functionResponse` parts, named by looking the call id up
 *   in the history (Gemini's function responses carry the function name, not an id). Images inside
 *   tool results follow those parts as `inlineData`/`fileData` parts of the same turn, which every
 *   Gemini generation accepts (`functionResponse.parts` is Gemini 3 only). See
 *   {@link convertToolResultParts}.
 * - Assistant turns become model turns; thought signatures are re-attached by
 *   {@link convertAssistantParts}.
 */
import type {
  AssistantContentPart,
  CanonicalMessage,
  TextPart,
  ToolCallPart,
  ToolResultPart,
} from "../../canonical/index.js";
import { GatewayError } from "../../errors/gateway-error.js";
import { isStateForUpstream } from "../shared/is-state-for-upstream.js";
import { convertMediaPart } from "./convert-media.js";
import { GOOGLE_PROVIDER_KIND } from "./google-provider-kind.js";
import { isGemini3OrLater } from "./read-model-generation.js";
import type { GeminiContent, GeminiPart } from "./wire-types.js";

/**
 * Google's documented stand-in for a function call Gemini did not sign itself (history from another
 * model or provider): Gemini 3 rejects the first function call of a step without any signature,
 * and a foreign signature must never be forwarded.
 */
export const SKIP_SIGNATURE_VALIDATOR = "skip_thought_signature_validator";

export interface ConvertedContents {
  systemInstruction?: { parts: Array<{ text: string }> };
  contents: GeminiContent[];
}

export function convertContents(
  system: TextPart[],
  messages: CanonicalMessage[],
  options: { upstreamModel: string },
): ConvertedContents {
  const toolNames = collectToolNames(messages);
  const turns: GeminiContent[] = [];
  messages.forEach((message, messageIndex) => {
    const location = `messages[${messageIndex}]`;
    // A turn of only blocks of another wire family (a Messages `search_result`) has nothing here.
    if (message.role !== "tool" && message.content.length === 0) return;
    switch (message.role) {
      case "user":
        turns.push({
          role: "user",
          parts: message.content.flatMap((part, partIndex): GeminiPart[] => {
            if (part.type === "text") return part.text === "" ? [] : [{ text: part.text }];
            return [convertMediaPart(part, `${location}.content[${partIndex}]`)];
          }),
        });
        break;
      case "assistant":
        turns.push({
          role: "model",
          parts: convertAssistantParts(message.content, options.upstreamModel, location),
        });
        break;
      case "tool":
        turns.push({ role: "user", parts: convertToolResultParts(message.content, toolNames, location) });
        break;
    }
  });
  const systemParts = system.filter((part) => part.text !== "").map((part) => ({ text: part.text }));
  if (systemParts.length === 0) return { contents: mergeTurns(turns) };
  return { systemInstruction: { parts: systemParts }, contents: mergeTurns(turns) };
}

/**
 * Assistant parts → model parts, re-attaching Gemini thought signatures where they came from.
 * The parsers put a signature:
 * - on a tool-call's `providerState` when it rode on a `functionCall` part;
 * - on a reasoning part's `providerState` when it rode on a thought part (reasoning with text);
 * - on an empty reasoning part right AFTER the text it rode on, or where an empty signed part
 *   stood (Gemini 3 often ends a turn with one).
 * So: a signed reasoning part with text goes back as that thought part; an empty signed one goes
 * back onto the text part just before it (one text part with its signature, as a non-streamed
 * answer has it), else as the empty signed text part it was. Histories from gateways that put the
 * empty part BEFORE the text are still valid: the signature then goes back as an empty part before
 * the text. Only state of kind `google` for this upstream model is used; reasoning text
 * without such state is not sent, since Gemini does not read earlier thoughts and foreign
 * reasoning must not turn into visible text.
 */
export function convertAssistantParts(
  content: AssistantContentPart[],
  upstreamModel: string,
  location: string,
): GeminiPart[] {
  const parts: GeminiPart[] = [];
  let callCount = 0;

  content.forEach((part, partIndex) => {
    const state = part.type === "text" ? undefined : part.providerState;
    const signature = isStateForUpstream(state, GOOGLE_PROVIDER_KIND, upstreamModel)
      ? state.signature
      : undefined;
    switch (part.type) {
      case "reasoning": {
        if (signature === undefined) return;
        if (part.text !== "") {
          parts.push({ text: part.text, thought: true, thoughtSignature: signature });
          return;
        }
        const previous = parts.at(-1);
        if (previous !== undefined && isVisibleText(previous) && previous.thoughtSignature === undefined) {
          previous.thoughtSignature = signature;
        } else {
          parts.push({ text: "", thoughtSignature: signature });
        }
        return;
      }
      case "text":
        if (part.text !== "") parts.push({ text: part.text });
        return;
      case "tool-call": {
        let callSignature = signature;
        if (callSignature === undefined && callCount === 0 && isGemini3OrLater(upstreamModel)) {
          callSignature = SKIP_SIGNATURE_VALIDATOR;
        }
        callCount += 1;
        const functionCall = {
          name: part.name,
          args: parseArguments(part, `${location}.content[${partIndex}]`),
        };
        parts.push(
          callSignature === undefined ? { functionCall } : { functionCall, thoughtSignature: callSignature },
        );
        return;
      }
    }
  });
  return parts;
}

function isVisibleText(part: GeminiPart): boolean {
  return "text" in part && part.text !== "" && part.thought !== true;
}

/**
 * Tool results → `functionResponse` parts, then the results' images. The response object follows
 * the documented convention (js-genai `FunctionResponse.response`): `{output}` for a result, `{error}`
 * for a failed call; a result whose text is a JSON object is sent as that object (structured output
 * stays structured), unless re-serialising it would round an integer beyond 2^53.
 */
export function convertToolResultParts(
  results: ToolResultPart[],
  toolNames: ReadonlyMap<string, string>,
  location: string,
): GeminiPart[] {
  const responses: GeminiPart[] = [];
  const media: GeminiPart[] = [];
  results.forEach((result, resultIndex) => {
    const resultLocation = `${location}.content[${resultIndex}]`;
    const name = toolNames.get(result.toolCallId);
    if (name === undefined) {
      throw GatewayError.invalidRequest(
        `${resultLocation}: tool result for unknown tool call id "${result.toolCallId}" ` +
          "(no earlier assistant turn made that call)",
        resultLocation,
      );
    }
    let text = "";
    result.content.forEach((item, itemIndex) => {
      if (item.type === "text") text += item.text;
      else media.push(convertMediaPart(item, `${resultLocation}.content[${itemIndex}]`));
    });
    const structured = parseJsonObject(text);
    const response = result.isError ? { error: structured ?? text } : (structured ?? { output: text });
    responses.push({ functionResponse: { name, response } });
  });
  return [...responses, ...media];
}

function collectToolNames(messages: CanonicalMessage[]): Map<string, string> {
  const names = new Map<string, string>();
  for (const message of messages) {
    if (message.role !== "assistant") continue;
    for (const part of message.content) if (part.type === "tool-call") names.set(part.id, part.name);
  }
  return names;
}

/** Gemini takes `args` as an object; canonical arguments are JSON text. */
function parseArguments(call: ToolCallPart, location: string): Record<string, unknown> {
  const text = call.arguments.trim();
  if (text === "") return {};
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw GatewayError.invalidRequest(
      `${location}: the arguments of tool call "${call.id}" are not valid JSON`,
      location,
    );
  }
  if (!isRecord(value)) {
    throw GatewayError.invalidRequest(
      `${location}: the arguments of tool call "${call.id}" are not a JSON object, which Gemini requires`,
      location,
    );
  }
  return value;
}

function parseJsonObject(text: string): Record<string, unknown> | undefined {
  if (!/^\s*\{/.test(text)) return undefined;
  try {
    const value: unknown = JSON.parse(text);
    return isRecord(value) && !hasUnsafeInteger(value) ? value : undefined;
  } catch {
    return undefined;
  }
}

function hasUnsafeInteger(value: unknown): boolean {
  if (typeof value === "number") return Number.isInteger(value) && !Number.isSafeInteger(value);
  if (Array.isArray(value)) return value.some(hasUnsafeInteger);
  if (isRecord(value)) return Object.values(value).some(hasUnsafeInteger);
  return false;
}

function mergeTurns(turns: GeminiContent[]): GeminiContent[] {
  const merged: GeminiContent[] = [];
  for (const turn of turns) {
    if (turn.parts.length === 0) continue;
    const previous = merged.at(-1);
    // A loop, not push(...parts): spreading a turn of very many parts would overflow the stack.
    if (previous?.role === turn.role) for (const part of turn.parts) previous.parts.push(part);
    else merged.push({ role: turn.role, parts: [...turn.parts] });
  }
  return merged;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

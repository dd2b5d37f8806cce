/**
 * A model scripted to use the gateway's server tools, in each provider's own wire format: a round
 * that calls tools (Chat `tool_calls`, Responses `function_call` items, Anthropic `tool_use`
 * blocks, Gemini `functionCall` parts) and a round that answers with text. And the reader of what
 * the gateway sent the model in the next round: the model's calls and the tools' results, read
 * back from that provider's wire form (`role: "tool"` messages, `function_call_output` items,
 * `tool_result` blocks, `functionResponse` parts).
 */
import assert from "node:assert/strict";
import type { UpstreamReply, UpstreamRequest } from "./conformance-gateway.js";
import { buildGeminiChunk, fakeGoogleReply } from "./fake-google-upstream.js";
import { renderAnswer, type UsageNumbers, upstreamToolCallId } from "./scenario-scripts.js";
import type { LoopKind } from "./server-tools-gateway.js";

// biome-ignore lint/suspicious/noExplicitAny: upstream wire bodies are read field by field.
type Json = any;

export interface ScriptedCall {
  name: string;
  input: Record<string, unknown>;
}

/** Gemini 3 attaches a thought signature to a turn's first call; it must come back with the call. */
export const GEMINI_CALL_SIGNATURE = "CiQB0e2KbServerTool+Call/Signature==";

export function usage(input: number, output: number): UsageNumbers {
  return { input, cached: 0, output, reasoning: 0 };
}

/** A round in which the model calls `calls` (and says `text` first, when given). */
export function callTools(
  kind: LoopKind,
  calls: ScriptedCall[],
  options: { stream: boolean; usage: UsageNumbers; text?: string[] },
): UpstreamReply {
  if (kind === "google") return geminiCalls(calls, options);
  return renderAnswer(
    kind,
    {
      ...(options.text === undefined ? {} : { text: options.text }),
      toolCalls: calls.map((call) => {
        const json = JSON.stringify(call.input);
        const cut = Math.max(1, Math.floor(json.length / 2));
        return { name: call.name, arguments: json, fragments: [json.slice(0, cut), json.slice(cut)] };
      }),
      finish: "tool-calls",
      usage: options.usage,
    },
    { stream: options.stream },
  );
}

/** A round in which the model answers with `pieces` of text. */
export function answer(
  kind: LoopKind,
  pieces: string[],
  options: { stream: boolean; usage: UsageNumbers },
): UpstreamReply {
  return renderAnswer(
    kind,
    { text: pieces, finish: "stop", usage: options.usage },
    { stream: options.stream },
  );
}

/** The id the model gave its `index`-th call of a round (Gemini gives none). */
export function modelCallId(kind: LoopKind, index: number): string | undefined {
  return upstreamToolCallId(kind, index);
}

function geminiCalls(
  calls: ScriptedCall[],
  options: { stream: boolean; usage: UsageNumbers; text?: string[] },
): UpstreamReply {
  const usageMetadata = {
    promptTokenCount: options.usage.input,
    candidatesTokenCount: options.usage.output,
    totalTokenCount: options.usage.input + options.usage.output,
  };
  const callParts = calls.map((call, index) => ({
    functionCall: { name: call.name, args: call.input },
    ...(index === 0 ? { thoughtSignature: GEMINI_CALL_SIGNATURE } : {}),
  }));
  const textParts = (options.text ?? []).map((text) => ({ text }));
  if (!options.stream) {
    return fakeGoogleReply.json(
      buildGeminiChunk([...textParts, ...callParts], { finishReason: "STOP", usage: usageMetadata }),
    );
  }
  const chunks = [
    ...textParts.map((part) => buildGeminiChunk([part], { usage: usageMetadata })),
    buildGeminiChunk(callParts, { finishReason: "STOP", usage: usageMetadata }),
  ];
  return fakeGoogleReply.sse(chunks);
}

/** One call as the next round's request carries it back. */
export interface EchoedCall {
  /** The model's id for it (none on the Gemini wire). */
  id?: string;
  name: string;
  input: Record<string, unknown>;
  /** Gemini only: the thought signature sent back with the call. */
  signature?: string;
}

/** One tool result as the next round's request carries it. */
export interface EchoedResult {
  /** The call it answers: its id, or on the Gemini wire its name. */
  answers: string;
  text: string;
  isError: boolean;
}

/** The model's calls and the tools' results in a request, read from `kind`'s wire form. */
export function readToolExchange(
  kind: LoopKind,
  body: Json,
): { calls: EchoedCall[]; results: EchoedResult[] } {
  switch (kind) {
    case "openai-compatible":
      return {
        calls: body.messages
          .filter((message: Json) => message.role === "assistant")
          .flatMap((message: Json) => message.tool_calls ?? [])
          .map((call: Json) => {
            assert.equal(call.type, "function");
            return { id: call.id, name: call.function.name, input: JSON.parse(call.function.arguments) };
          }),
        results: body.messages
          .filter((message: Json) => message.role === "tool")
          .map((message: Json) => {
            assert.equal(typeof message.content, "string", "a text result is a string");
            return { answers: message.tool_call_id, text: message.content, isError: false };
          }),
      };
    case "openai-responses":
      return {
        calls: body.input
          .filter((item: Json) => item.type === "function_call")
          .map((item: Json) => ({ id: item.call_id, name: item.name, input: JSON.parse(item.arguments) })),
        results: body.input
          .filter((item: Json) => item.type === "function_call_output")
          .map((item: Json) => {
            assert.equal(typeof item.output, "string", "a text result is a string");
            return { answers: item.call_id, text: item.output, isError: false };
          }),
      };
    case "anthropic": {
      const blocks = (role: string) =>
        body.messages
          .filter((message: Json) => message.role === role && Array.isArray(message.content))
          .flatMap((message: Json) => message.content);
      return {
        calls: blocks("assistant")
          .filter((block: Json) => block.type === "tool_use")
          .map((block: Json) => ({ id: block.id, name: block.name, input: block.input })),
        results: blocks("user")
          .filter((block: Json) => block.type === "tool_result")
          .map((block: Json) => ({
            answers: block.tool_use_id,
            text: (block.content ?? []).map((part: Json) => part.text).join(""),
            isError: block.is_error === true,
          })),
      };
    }
    case "google": {
      const parts = (role: string) =>
        body.contents
          .filter((content: Json) => content.role === role)
          .flatMap((content: Json) => content.parts);
      return {
        calls: parts("model")
          .filter((part: Json) => part.functionCall !== undefined)
          .map((part: Json) => ({
            name: part.functionCall.name,
            input: part.functionCall.args,
            ...(part.thoughtSignature === undefined ? {} : { signature: part.thoughtSignature }),
          })),
        results: parts("user")
          .filter((part: Json) => part.functionResponse !== undefined)
          .map((part: Json) => {
            const response = part.functionResponse.response;
            const isError = response.error !== undefined;
            const value = isError ? response.error : (response.output ?? response);
            return {
              answers: part.functionResponse.name,
              text: typeof value === "string" ? value : JSON.stringify(value),
              isError,
            };
          }),
      };
    }
  }
}

export interface ExpectedExchange {
  call: ScriptedCall;
  /** Texts the tool's result must contain. */
  resultIncludes: string[];
  /** Texts it must not contain. */
  resultExcludes?: string[];
  /** The result is marked as a failure where the wire can say so (Anthropic, Gemini). */
  failed?: boolean;
}

/**
 * The request of a later round carries the model's calls of the previous round, each answered by
 * its result, in the provider's wire form: the same calls (ids, names, arguments, Gemini's
 * signature) and results that say what the tools found.
 */
export function assertExchangeCarried(
  kind: LoopKind,
  request: UpstreamRequest,
  expected: ExpectedExchange[],
): void {
  const { calls, results } = readToolExchange(kind, request.body);
  assert.deepEqual(
    calls.map((call) => ({ name: call.name, input: call.input })),
    expected.map((entry) => ({ name: entry.call.name, input: entry.call.input })),
    "the model's calls go back as it made them",
  );
  assert.equal(results.length, expected.length, "one result per call");
  expected.forEach((entry, index) => {
    const call = calls[index];
    const result = results[index];
    if (kind === "google") {
      assert.equal(result.answers, entry.call.name, "a functionResponse names its call");
      if (index === 0)
        assert.equal(call.signature, GEMINI_CALL_SIGNATURE, "the thought signature comes back");
    } else {
      assert.equal(call.id, modelCallId(kind, index), "the model's own call id");
      assert.equal(result.answers, call.id, "the result answers its call");
    }
    for (const text of entry.resultIncludes) {
      assert.ok(
        result.text.includes(text),
        `result ${index} includes ${JSON.stringify(text)}:\n${result.text}`,
      );
    }
    for (const text of entry.resultExcludes ?? []) {
      assert.ok(!result.text.includes(text), `result ${index} leaves out ${JSON.stringify(text)}`);
    }
    if (kind === "anthropic" || kind === "google") {
      assert.equal(result.isError, entry.failed === true, `result ${index} failure flag`);
    }
  });
}

/** The names of the function tools a request offered the model, in `kind`'s wire form. */
export function offeredToolNames(kind: LoopKind, body: Json): string[] {
  switch (kind) {
    case "openai-compatible":
      return (body.tools ?? []).map((tool: Json) => tool.function.name);
    case "openai-responses":
    case "anthropic":
      return (body.tools ?? []).map((tool: Json) => tool.name);
    case "google":
      return (body.tools ?? []).flatMap((tool: Json) =>
        (tool.functionDeclarations ?? []).map((declaration: Json) => declaration.name),
      );
  }
}

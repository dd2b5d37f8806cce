/**
 * The canonical parts of a run in which the model used the `image` server tool, for the encoders'
 * tests: round 1 says a few words and asks for two images, one made (a real PNG) and one refused by
 * the provider; round 2 describes the one it got. What each format must make of it is in its tests.
 */
import type {
  CanonicalResult,
  CanonicalStreamPart,
  ServerToolCall,
  ServerToolResult,
} from "../../src/canonical/index.js";
import { buildTestPng } from "./build-test-image.js";

export const GENERATED_PNG = buildTestPng(40, 30);
export const GENERATED_BASE64 = GENERATED_PNG.toString("base64");
export const BEFORE_TEXT = "Drawing it now. ";
export const AFTER_TEXT = "Here is your fox.";

export function imageCalls(events: boolean): [ServerToolCall, ServerToolCall] {
  return [
    { id: "call_img1", tool: "image", input: { prompt: "a red fox", size: "1536x1024" }, events },
    { id: "call_img2", tool: "image", input: { prompt: "something refused" }, events },
  ];
}

export function imageResults(events: boolean): [ServerToolResult, ServerToolResult] {
  const [made, refused] = imageCalls(events);
  return [
    {
      callId: made.id,
      tool: "image",
      input: made.input,
      status: "completed",
      output: {
        kind: "image",
        base64: GENERATED_BASE64,
        mediaType: "image/png",
        size: "40x30",
        revisedPrompt: "A red fox in snow.",
        provider: "openai",
        model: "gpt-image-1",
      },
      costMicroUsd: 63_000,
      durationMs: 1200,
      events,
    },
    {
      callId: refused.id,
      tool: "image",
      input: refused.input,
      status: "failed",
      error: {
        code: "invalid_input",
        message: "Image generation failed: The image provider refused the prompt under its content policy.",
      },
      costMicroUsd: 0,
      durationMs: 300,
      events,
    },
  ];
}

/** The stream of such a run, as the engine yields it. */
export function imageToolRunParts(events: boolean): CanonicalStreamPart[] {
  const calls = imageCalls(events);
  const results = imageResults(events);
  return [
    { type: "response-metadata", upstreamModel: "gpt-4o" },
    { type: "text-start", id: "t1" },
    { type: "text-delta", id: "t1", delta: BEFORE_TEXT },
    { type: "text-end", id: "t1" },
    { type: "server-tool-call", call: calls[0] },
    { type: "server-tool-call", call: calls[1] },
    { type: "server-tool-result", result: results[0] },
    { type: "server-tool-result", result: results[1] },
    { type: "text-start", id: "r2:t1" },
    { type: "text-delta", id: "r2:t1", delta: AFTER_TEXT },
    { type: "text-end", id: "r2:t1" },
    { type: "finish", reason: "stop" },
  ];
}

/** The same run folded into one result. */
export function imageToolRunResult(events = false): CanonicalResult {
  const calls = imageCalls(events);
  const results = imageResults(events);
  return {
    content: [
      { type: "text", text: BEFORE_TEXT },
      { type: "server-tool-call", call: calls[0] },
      { type: "server-tool-call", call: calls[1] },
      { type: "server-tool-result", result: results[0] },
      { type: "server-tool-result", result: results[1] },
      { type: "text", text: AFTER_TEXT },
    ],
    finishReason: "stop",
    usage: {
      inputTokens: 500,
      outputTokens: 40,
      cachedInputTokens: 0,
      cacheWriteTokens: 0,
      cacheWrite1hTokens: 0,
      reasoningTokens: 0,
    },
  };
}

/**
 * Usage-record fixtures for storage tests: one place for the shape of a generation's start and
 * outcome, so tests spell out only the fields they are about.
 */
import type { GenerationOutcome, GenerationStart } from "../../src/engine/generation-record.js";

/** A successful outcome; pass what the test checks (cost, tokens, status, …). */
export function createTestOutcome(overrides: Partial<GenerationOutcome> = {}): GenerationOutcome {
  return {
    status: "ok",
    errorCode: null,
    upstreamProvider: "p",
    upstreamModel: "m",
    tokensPrompt: 1,
    tokensCompletion: 1,
    tokensReasoning: 0,
    tokensCachedPrompt: 0,
    tokensCacheWrite: 0,
    costMicroUsd: 0,
    toolCostsMicroUsd: {},
    latencyMs: 1,
    finishReason: "stop",
    ...overrides,
  };
}

/** A chat-completions request's record identity for the given workspace and key. */
export function createTestStart(
  identity: Pick<GenerationStart, "id" | "workspaceId" | "apiKeyId">,
  overrides: Partial<GenerationStart> = {},
): GenerationStart {
  return {
    ...identity,
    model: "openai/gpt-4o",
    ingressFormat: "chat_completions",
    source: "api",
    stream: false,
    ...overrides,
  };
}

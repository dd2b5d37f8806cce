/**
 * The payload of a `hi.tool_event` frame, the same in every format (each format only chooses the
 * frame that carries it): which tool, which call, which phase, its input, and once it ended a
 * short summary of its output, its cost and its duration. Never the fetched text, a snippet or an
 * image's data: the events tell what is happening, the answer carries the content.
 */
import type { ServerToolCall, ServerToolOutput, ServerToolResult } from "../../canonical/index.js";

export type ToolEventPhase = "started" | "completed" | "failed";

export interface ToolEventPayload {
  tool: string;
  phase: ToolEventPhase;
  /** The call's id as the format shows it elsewhere (`srvtoolu_…`, `ws_…`), so events and blocks match. */
  call_id: string;
  input: Record<string, unknown>;
  /** Set once the call ended. */
  output?: Record<string, unknown>;
  error?: { code: string; message: string };
  cost_micro_usd?: number;
  duration_ms?: number;
}

/** URLs listed in a search summary at most (the count says how many there were). */
const MAX_SUMMARY_URLS = 20;

export function createToolStartedPayload(call: ServerToolCall, wireId: string): ToolEventPayload {
  return { tool: call.tool, phase: "started", call_id: wireId, input: call.input };
}

export function createToolEndedPayload(result: ServerToolResult, wireId: string): ToolEventPayload {
  const payload: ToolEventPayload = {
    tool: result.tool,
    phase: result.status === "completed" ? "completed" : "failed",
    call_id: wireId,
    input: result.input,
  };
  if (result.output !== undefined) payload.output = summarizeOutput(result.output);
  if (result.error !== undefined) payload.error = { code: result.error.code, message: result.error.message };
  payload.cost_micro_usd = result.costMicroUsd;
  payload.duration_ms = result.durationMs;
  return payload;
}

function summarizeOutput(output: ServerToolOutput): Record<string, unknown> {
  switch (output.kind) {
    case "search":
      return {
        result_count: output.sources.length,
        urls: output.sources.slice(0, MAX_SUMMARY_URLS).map((source) => source.url),
      };
    case "fetch":
      return {
        url: output.finalUrl,
        title: output.title,
        content_type: output.contentType,
        bytes: output.bytes,
        truncated: output.truncated,
      };
    case "datetime":
      return { utc: output.utc, timezones: output.timezones };
    case "image":
      return { media_type: output.mediaType, size: output.size, bytes: countBase64Bytes(output.base64) };
  }
}

/** The length of the data `base64` encodes (no decoding: an image may be megabytes). */
function countBase64Bytes(base64: string): number {
  const padding = base64.endsWith("==") ? 2 : base64.endsWith("=") ? 1 : 0;
  return Math.floor((base64.length * 3) / 4) - padding;
}

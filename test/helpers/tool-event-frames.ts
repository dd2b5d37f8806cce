/**
 * The `hi.tool_event` payloads of a raw SSE body, whichever format carries them: Chat puts the
 * payload in a chunk's `hi_tool_event`, Responses in a keepalive event's `hi_tool_event`, Messages
 * in the event itself (its `type` aside).
 */
import { TOOL_EVENT } from "../conformance/support/stream-rules.js";
import { parseSseFrames } from "../conformance/support/wire-tap.js";

export type EventFormat = "chat" | "responses" | "messages";

export interface ToolEvent {
  tool: string;
  phase: "started" | "completed" | "failed";
  call_id: string;
  input: Record<string, unknown>;
  output?: Record<string, unknown>;
  error?: { code: string; message: string };
  cost_micro_usd?: number;
  duration_ms?: number;
}

export function readToolEvents(format: EventFormat, body: string): ToolEvent[] {
  return parseSseFrames(body)
    .filter((frame) => frame.event === TOOL_EVENT)
    .map((frame) => {
      const data = JSON.parse(frame.data);
      if (format !== "messages") return data.hi_tool_event as ToolEvent;
      const { type: _type, ...payload } = data;
      return payload as ToolEvent;
    });
}

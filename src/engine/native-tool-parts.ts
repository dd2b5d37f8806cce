/**
 * Tools the provider runs itself (`request.nativeServerTools`) arrive from the adapter as
 * server-tool parts carrying the provider's record of them. The tool loop never runs them: it
 * passes them on (without the record, which goes into the turn the next round re-sends), prices
 * each completed call at the serving model's catalog price, counts it against `max_uses` and
 * `max_tool_calls` (tool-use-bounds.ts), and records it with the gateway's own calls
 * (tool-call-ledger.ts).
 */
import type {
  CanonicalStreamPart,
  ServerToolCall,
  ServerToolId,
  ServerToolResult,
} from "../canonical/index.js";
import type { ToolCallLedger } from "./tool-call-ledger.js";
import type { ToolUseBounds } from "./tool-use-bounds.js";

type Part<T extends CanonicalStreamPart["type"]> = Extract<CanonicalStreamPart, { type: T }>;

export class NativeToolParts {
  /** Price of one completed call of each tool the serving route's provider runs itself. */
  private prices: Partial<Record<ServerToolId, number>> = {};
  /** Native calls seen, until their result comes (a paused turn's last call: in the next round). */
  private readonly calls = new Map<string, { call: ServerToolCall; startedAt: number }>();

  constructor(
    private readonly bounds: ToolUseBounds,
    private readonly ledger: ToolCallLedger,
  ) {}

  /** The serving route's catalog price per call of each tool its provider runs. */
  usePrices(prices: Partial<Record<ServerToolId, { pricePerCallMicroUsd: number }>>): void {
    this.prices = {};
    for (const [tool, price] of Object.entries(prices)) {
      if (price !== undefined) this.prices[tool as ServerToolId] = price.pricePerCallMicroUsd;
    }
  }

  /** A call the provider made itself: counted against the bounds. `events`: the client wants its events. */
  acceptCall(part: Part<"server-tool-call">, events: boolean): CanonicalStreamPart {
    const call: ServerToolCall = {
      id: part.call.id,
      tool: part.call.tool,
      input: part.call.input,
      events,
    };
    this.bounds.countUse(call.tool);
    this.calls.set(call.id, { call, startedAt: performance.now() });
    return { type: "server-tool-call", call };
  }

  /** A result of the provider's own call: priced from the catalog (a failed call costs nothing) and recorded. */
  acceptResult(part: Part<"server-tool-result">, events: boolean): CanonicalStreamPart {
    const seen = this.calls.get(part.result.callId);
    this.calls.delete(part.result.callId);
    const now = performance.now();
    const startedAt = seen?.startedAt ?? now;
    const completed = part.result.status === "completed";
    const input = seen?.call.input ?? part.result.input;
    const result: ServerToolResult = { ...part.result };
    result.input = input;
    result.costMicroUsd = completed ? (this.prices[part.result.tool] ?? 0) : 0;
    result.durationMs = Math.round(now - startedAt);
    result.events = seen?.call.events ?? events;
    // A paused turn's last call is answered in the next round, whose response does not repeat it.
    const output = result.output;
    if (output?.kind === "search" && output.query === "" && typeof input.query === "string") {
      result.output = { kind: "search", query: input.query, sources: output.sources };
    }
    // Not a source of the link finder: the provider cites its own results, and a link to one
    // would be cited twice.
    this.ledger.account(result, startedAt, true);
    return { type: "server-tool-result", result };
  }

  /** Calls seen without their result yet, per tool. */
  unanswered(): Map<ServerToolId, number> {
    const unanswered = new Map<ServerToolId, number>();
    for (const { call } of this.calls.values()) {
      unanswered.set(call.tool, (unanswered.get(call.tool) ?? 0) + 1);
    }
    return unanswered;
  }
}

/**
 * What one request's server-tool calls ran and cost: every call executed (or answered with a
 * limit) for the record, the cost in all and per tool for the settlement, and the calls per tool
 * for usage counters.
 */
import type { ServerToolId, ServerToolResult } from "../canonical/index.js";
import type { ExecutedToolCall } from "./settled-generation.js";

export class ToolCallLedger {
  /** Every call executed (or answered with a limit), in the order they ran. */
  readonly executed: ExecutedToolCall[] = [];
  /** Tool cost in all, micro-USD, and per tool. */
  costMicroUsd = 0;
  readonly costs: Record<string, number> = {};
  /** Calls made per tool (refused ones included), for usage counters. */
  readonly callCounts: Partial<Record<ServerToolId, number>> = {};

  /**
   * Counts an ended call. `native`: the provider ran it. `shares`: when part of its cost belongs to
   * another tool's line (web_fetch of a PDF pays pdf pages), each tool's share.
   */
  account(
    result: ServerToolResult,
    startedAt: number,
    native: boolean,
    shares: Partial<Record<ServerToolId, number>> = { [result.tool]: result.costMicroUsd },
  ): void {
    this.callCounts[result.tool] = (this.callCounts[result.tool] ?? 0) + 1;
    this.costMicroUsd += result.costMicroUsd;
    for (const [tool, micro] of Object.entries(shares)) {
      if (micro !== undefined && micro > 0) this.costs[tool] = (this.costs[tool] ?? 0) + micro;
    }
    this.executed.push({
      tool: result.tool,
      status: result.status,
      ...(result.error === undefined ? {} : { errorCode: result.error.code }),
      costMicroUsd: result.costMicroUsd,
      ...(native ? { native: true as const } : {}),
      startedAt,
      durationMs: result.durationMs,
    });
  }
}

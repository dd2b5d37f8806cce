/**
 * The bounds on one request's server-tool calls: each tool's `max_uses` and the request's
 * `max_tool_calls`. A call of the gateway's own tools past them is answered "limit reached" and
 * costs nothing; calls a provider runs itself count too, and the next round asks that provider
 * for no more than what is left.
 */
import type { NativeServerTool, ServerToolActivation, ServerToolId } from "../canonical/index.js";

/** Why a call was answered without running. */
export interface CallRefusal {
  code: "max_uses_exceeded" | "budget_exhausted";
  message: string;
}

export class ToolUseBounds {
  private readonly uses = new Map<ServerToolId, number>();
  private callsInAll = 0;

  constructor(
    private readonly activations: ReadonlyMap<ServerToolId, ServerToolActivation>,
    /** The most calls of one native tool in one round. */
    private readonly maxNativeCallsPerRound: number,
  ) {}

  /**
   * Refusal when the tool's `max_uses` or the request's `max_tool_calls` (`maxToolCalls`) is
   * spent; else counts the use.
   */
  take(tool: ServerToolId, maxToolCalls: number | undefined): CallRefusal | undefined {
    const used = this.uses.get(tool) ?? 0;
    const maxUses = this.activations.get(tool)?.maxUses ?? Number.POSITIVE_INFINITY;
    if (used >= maxUses) {
      return {
        code: "max_uses_exceeded",
        message: `Not run: ${tool} may be used at most ${maxUses} times in this request. Answer with what you have.`,
      };
    }
    if (maxToolCalls !== undefined && this.callsInAll >= maxToolCalls) {
      return {
        code: "max_uses_exceeded",
        message: `Not run: this request allows at most ${maxToolCalls} tool calls. Answer with what you have.`,
      };
    }
    this.countUse(tool);
    return undefined;
  }

  /** A call the provider made itself: counted, whatever the bounds (it has run). */
  countUse(tool: ServerToolId): void {
    this.uses.set(tool, (this.uses.get(tool) ?? 0) + 1);
    this.callsInAll += 1;
  }

  /**
   * The native tools of the next round (`current`: this round's), asking the provider for no more
   * calls than the bounds leave; a tool with none left is not sent, unless the turn has a call of
   * it still to answer (`unanswered`: a paused turn's last call), which the provider runs as part
   * of the next round. `maxToolCalls`: the current round's request's.
   */
  nextNativeTools(
    current: readonly NativeServerTool[],
    unanswered: ReadonlyMap<ServerToolId, number>,
    maxToolCalls: number | undefined,
  ): NativeServerTool[] {
    const tools: NativeServerTool[] = [];
    for (const tool of current) {
      const activation = this.activations.get(tool.tool);
      const left = Math.min(
        (activation?.maxUses ?? Number.POSITIVE_INFINITY) - (this.uses.get(tool.tool) ?? 0),
        (maxToolCalls ?? Number.POSITIVE_INFINITY) - this.callsInAll,
      );
      const pending = unanswered.get(tool.tool) ?? 0;
      const maxUses = Math.max(pending, Math.min(this.maxNativeCallsPerRound, left + pending));
      if (maxUses >= 1) {
        const next = { ...tool };
        next.maxUses = maxUses;
        tools.push(next);
      }
    }
    return tools;
  }
}

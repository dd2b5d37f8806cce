/**
 * The server-tool loop of one run. The request's activated tools are offered to the model as
 * function tools (admission added their definitions); each upstream round's parts pass through
 * `transform` (tool-round-receiver.ts), which hides the model's calls to those tools from the
 * client (they become `server-tool-call` parts) and holds the round's usage and finish back. When
 * the round has ended, `finishRound` runs the calls (concurrently), yields their
 * `server-tool-result` parts in call order, and says whether another round follows (with the
 * request it sends) or how the answer ends. The run drives it (run-tool-rounds.ts), streamed or
 * not, and meters each round.
 *
 * Bounds: each tool's `max_uses` and the request's `max_tool_calls` (tool-use-bounds.ts), the
 * configured number of rounds (the last one is offered no server tool when the caller has no
 * function tools of its own, so the model must answer), the
 * run's deadline (its signal aborts the calls), and the spend limits: before the calls of a round
 * run, the reservation is extended to cover their price and the next round's worst case; when
 * the headroom cannot, the calls are answered "budget exhausted" and the answer ends with the
 * finish reason `length`. A round that mixes server calls with calls to the caller's own tools
 * runs the server calls, then ends the loop: the caller's calls go back to it as usual, after the
 * server calls' results (they are held until the round has ended, so no format shows a result
 * after the caller's calls).
 *
 * Tools the provider runs itself arrive as server-tool parts (native-tool-parts.ts). A round the
 * provider paused (`pause`, Anthropic's `pause_turn`) is resumed: the next round re-sends the
 * paused turn as the last message, within the same bounds of rounds and spend as any other
 * round; the client sees one answer.
 */
import type {
  CanonicalMessage,
  CanonicalRequest,
  CanonicalStreamPart,
  ExtraField,
  NativeServerTool,
  ServerToolActivation,
  ServerToolId,
  ServerToolResult,
  ServerToolSource,
  ToolResultPart,
} from "../canonical/index.js";
import { collectSources } from "./find-citations.js";
import { NativeToolParts } from "./native-tool-parts.js";
import type { ServerToolExecution, ServerToolSession } from "./ports.js";
import type { ExecutedToolCall } from "./settled-generation.js";
import { ToolCallLedger } from "./tool-call-ledger.js";
import { type PendingCall, RoundReceiver } from "./tool-round-receiver.js";
import { ToolUseBounds } from "./tool-use-bounds.js";

export interface ToolLoopOptions {
  /** Upstream rounds one request may make in all (the first included). */
  maxRounds: number;
  /** Makes call ids unique in the response. */
  requestId: string;
  /** The most calls of one native tool in one round. */
  maxNativeCallsPerRound: number;
}

/** How a round ended: another round with `request`, or the answer's end. */
export type RoundDecision =
  | { kind: "next"; request: CanonicalRequest }
  | { kind: "end"; finish: Extract<CanonicalStreamPart, { type: "finish" }> };

/**
 * Before a round's calls run: hold enough for `toolsMicroUsd` more and, when `next` is set, the
 * worst case of that round: its request's prompt plus `resultTokens` of tool results not in it yet.
 * false: the headroom cannot cover it.
 */
export type ReserveRound = (
  toolsMicroUsd: number,
  next: { request: CanonicalRequest; resultTokens: number } | undefined,
) => Promise<boolean>;

const ROUND_LIMIT_MESSAGE =
  "Not run: this request has used all the server-tool rounds it may. Answer with what you have.";
const BUDGET_MESSAGE =
  "Not run: the remaining spending limit of this API key cannot pay for it. Answer with what you have.";

export class ToolLoop {
  private readonly activations: ReadonlyMap<ServerToolId, ServerToolActivation>;
  private readonly ledger = new ToolCallLedger();
  private readonly bounds: ToolUseBounds;
  private readonly native: NativeToolParts;
  /** What the gateway's tools found (links to them are citations). */
  private readonly sources = new Map<string, ServerToolSource>();
  /** The round being received. */
  private readonly received: RoundReceiver;

  constructor(
    private readonly session: ServerToolSession,
    /** The first round's request (it includes the tool definitions). */
    request: CanonicalRequest,
    private readonly options: ToolLoopOptions,
  ) {
    this.activations = new Map(request.serverTools.map((activation) => [activation.id, activation]));
    this.bounds = new ToolUseBounds(this.activations, options.maxNativeCallsPerRound);
    this.native = new NativeToolParts(this.bounds, this.ledger);
    this.received = new RoundReceiver(
      session,
      this.activations,
      options.requestId,
      this.native,
      this.sources,
      request,
    );
  }

  /** The round being received (1-based). */
  get round(): number {
    return this.received.round;
  }

  /** What the client sees of one upstream part of the current round (possibly nothing). */
  transform(part: CanonicalStreamPart): CanonicalStreamPart[] {
    return this.received.transform(part);
  }

  /** Every call executed (or answered with a limit), in the order they ran. */
  get executed(): ExecutedToolCall[] {
    return this.ledger.executed;
  }

  /** Tool cost in all, micro-USD, and per tool. */
  get toolCostMicroUsd(): number {
    return this.ledger.costMicroUsd;
  }

  get toolCosts(): Record<string, number> {
    return this.ledger.costs;
  }

  /** Calls made per tool (refused ones included), for usage counters. */
  get callCounts(): Partial<Record<ServerToolId, number>> {
    return this.ledger.callCounts;
  }

  /** The request the current round was sent (for estimates of its prompt). */
  get roundRequest(): CanonicalRequest {
    return this.received.request;
  }

  /**
   * The first round's request as the serving route was sent it (its documents read as that route
   * reads them, its native tools in place of their definitions) and the catalog price of each
   * native tool's call. Later rounds build on that request, so they repeat what the model saw.
   */
  useRoute(
    request: CanonicalRequest,
    nativePrices: Partial<Record<ServerToolId, { pricePerCallMicroUsd: number }>>,
  ): void {
    if (this.received.round !== 1) return;
    this.received.request = request;
    this.native.usePrices(nativePrices);
  }

  /** true when the round that ended called a server tool: `finishRound` has calls to run. */
  get roundCalledTools(): boolean {
    return this.received.calls.length > 0;
  }

  /** The finish the upstream gave the round that ended (undefined when it gave none). */
  get roundFinish(): Extract<CanonicalStreamPart, { type: "finish" }> | undefined {
    return this.received.finishPart;
  }

  /**
   * After the round's last part: runs its server calls, yields their results, and returns what
   * comes next. `signal` aborts the calls (client gone, deadline).
   */
  async *finishRound(
    reserve: ReserveRound,
    signal: AbortSignal,
  ): AsyncGenerator<CanonicalStreamPart, RoundDecision> {
    const upstreamFinish = this.received.finishPart ?? { type: "finish", reason: "stop" };
    const calls = this.received.calls;
    if (calls.length === 0) {
      yield* this.releaseClientParts();
      if (upstreamFinish.reason === "pause" && (this.received.request.nativeServerTools?.length ?? 0) > 0) {
        return await this.resumePausedTurn(reserve);
      }
      return { kind: "end", finish: upstreamFinish };
    }
    const mixed = this.received.clientCalls > 0;
    const lastRound = this.received.round >= this.options.maxRounds;
    let continues = !mixed && !lastRound;

    for (const pending of calls) {
      if (lastRound && !mixed) {
        pending.refusal = { code: "max_uses_exceeded", message: ROUND_LIMIT_MESSAGE };
      } else {
        pending.refusal = this.bounds.take(pending.call.tool, this.received.request.maxToolCalls);
      }
    }
    const runnable = calls.filter((pending) => pending.refusal === undefined);
    const toolsMicroUsd = runnable.reduce(
      (sum, pending) => sum + this.session.maxCallCostMicroUsd(pending.call.tool),
      0,
    );
    const next = continues
      ? {
          request: this.createNextRequest([]),
          resultTokens: calls.reduce(
            (sum, pending) =>
              sum + (pending.refusal === undefined ? this.session.maxResultTokens(pending.call.tool) : 64),
            0,
          ),
        }
      : undefined;
    let budgetExhausted = false;
    if (runnable.length > 0 || next !== undefined) {
      if (!(await reserve(toolsMicroUsd, next))) {
        budgetExhausted = true;
        continues = false;
        for (const pending of runnable)
          pending.refusal = { code: "budget_exhausted", message: BUDGET_MESSAGE };
      }
    }

    const executions = calls.map((pending) => this.run(pending, signal));
    const toolResults: ToolResultPart[] = [];
    for (const [index, pending] of calls.entries()) {
      const { execution, startedAt, durationMs } = await executions[index];
      const result = this.recordResult(pending, execution, startedAt, durationMs);
      toolResults.push({
        type: "tool-result",
        toolCallId: pending.upstreamId,
        content: [{ type: "text", text: execution.forModel }],
        ...(result.status === "failed" ? { isError: true } : {}),
      });
      yield { type: "server-tool-result", result };
    }

    if (!continues) {
      this.received.calls = [];
      yield* this.releaseClientParts();
      if (mixed) return { kind: "end", finish: upstreamFinish };
      // The model wanted more than the request may give: its answer is cut short, as by a cap.
      const rawReason = budgetExhausted ? "server_tool_budget" : "server_tool_rounds";
      return { kind: "end", finish: { type: "finish", reason: "length", rawReason } };
    }
    const request = this.createNextRequest(toolResults);
    this.received.startRound(request);
    return { kind: "next", request };
  }

  /**
   * The provider paused its turn (it was running its own tools for long): the next round re-sends
   * the paused turn as the last message, so the provider carries on with it. A round or budget
   * bound ends the answer as for the gateway's own calls.
   */
  private async resumePausedTurn(reserve: ReserveRound): Promise<RoundDecision> {
    if (this.received.round >= this.options.maxRounds) {
      return { kind: "end", finish: { type: "finish", reason: "length", rawReason: "server_tool_rounds" } };
    }
    const messages: CanonicalMessage[] = [
      ...this.received.request.messages,
      { role: "assistant", content: this.received.content },
    ];
    const request = this.continueRequest(messages);
    if (!(await reserve(0, { request, resultTokens: 0 }))) {
      return { kind: "end", finish: { type: "finish", reason: "length", rawReason: "server_tool_budget" } };
    }
    this.received.startRound(request);
    return { kind: "next", request };
  }

  /** The next round's request: this round's with `messages` and the native tools left. */
  private continueRequest(messages: CanonicalMessage[]): CanonicalRequest {
    const request = { ...this.received.request };
    request.messages = messages;
    const nativeServerTools = this.nextNativeTools();
    if (nativeServerTools !== undefined) request.nativeServerTools = nativeServerTools;
    return request;
  }

  /** The native tools of the next round (undefined when this round has none), within the bounds left. */
  private nextNativeTools(): NativeServerTool[] | undefined {
    const current = this.received.request.nativeServerTools;
    if (current === undefined) return undefined;
    return this.bounds.nextNativeTools(current, this.native.unanswered(), this.received.request.maxToolCalls);
  }

  private *releaseClientParts(): Generator<CanonicalStreamPart> {
    yield* this.received.takeClientParts();
  }

  /** One call, timed; a call refused by a limit is answered at once. */
  private async run(
    pending: PendingCall,
    signal: AbortSignal,
  ): Promise<{ execution: ServerToolExecution; startedAt: number; durationMs: number }> {
    const startedAt = performance.now();
    if (pending.refusal !== undefined) {
      const { refusal } = pending;
      return {
        execution: { error: refusal, costMicroUsd: 0, forModel: refusal.message },
        startedAt,
        durationMs: 0,
      };
    }
    const execution = await this.session.execute(pending.call.tool, pending.argumentsJson, signal);
    return { execution, startedAt, durationMs: Math.round(performance.now() - startedAt) };
  }

  private recordResult(
    pending: PendingCall,
    execution: ServerToolExecution,
    startedAt: number,
    durationMs: number,
  ): ServerToolResult {
    const { call } = pending;
    const failed = execution.error !== undefined || execution.output === undefined;
    const result: ServerToolResult = {
      callId: call.id,
      tool: call.tool,
      input: call.input,
      status: failed ? "failed" : "completed",
      costMicroUsd: execution.costMicroUsd,
      durationMs,
      events: call.events,
    };
    if (execution.output !== undefined && !failed) result.output = execution.output;
    if (failed) {
      result.error = execution.error ?? { code: "unavailable", message: "The tool gave no result." };
    }
    this.ledger.account(result, startedAt, false, execution.costsByTool);
    collectSources(result, this.sources);
    return result;
  }

  /** The round that follows: the model's turn and the tools' results appended. */
  private createNextRequest(toolResults: ToolResultPart[]): CanonicalRequest {
    const messages: CanonicalMessage[] = [
      ...this.received.request.messages,
      { role: "assistant", content: this.received.content },
      { role: "tool", content: toolResults },
    ];
    const next = this.continueRequest(messages);
    const choice = this.received.request.toolChoice;
    // A forced tool call was made in this round; forcing it again would loop until the cap.
    if (choice?.type === "required" || choice?.type === "tool") next.toolChoice = { type: "auto" };
    // The same for a choice carried as it came (a forced `custom` or Anthropic tool, `allowed_tools`
    // in `required` mode); one whose mode is `auto` only narrows the tools and stays.
    const carried = next.extraFields?.filter((field) => !isForcingToolChoice(field));
    if (carried !== undefined && carried.length !== next.extraFields?.length)
      next.extraFields = carried.length > 0 ? carried : undefined;
    // The last round may call nothing that would need one more: offered no tool, the model answers.
    const definitionsOnly = this.received.request.tools.every(
      (tool) => this.session.toolNamed(tool.name) !== undefined,
    );
    if (this.received.round + 1 >= this.options.maxRounds && definitionsOnly)
      next.toolChoice = { type: "none" };
    return next;
  }
}

/** A tool_choice carried for the caller's own wire family that forces a call. */
function isForcingToolChoice(field: ExtraField): boolean {
  if (field.path.length !== 1 || field.path[0] !== "tool_choice") return false;
  const mode = (field.value as { mode?: unknown } | null)?.mode;
  return mode !== "auto";
}

/**
 * The server-tool loop of one run. The request's activated tools are offered to the model as
 * function tools (admission added their definitions); each upstream round's parts pass through
 * `transform`, which hides the model's calls to those tools from the client (they become
 * `server-tool-call` parts) and holds the round's usage and finish back. When the round has ended,
 * `finishRound` runs the calls (concurrently), yields their `server-tool-result` parts in call
 * order, and says whether another round follows (with the request it sends) or how the answer
 * ends. The run (generation-run.ts) drives it, streamed or not, and meters each round.
 *
 * Bounds: each tool's `max_uses` and the request's `max_tool_calls` (a call past them is answered
 * "limit reached" and costs nothing), the configured number of rounds (the last one is offered no
 * server tool when the caller has no function tools of its own, so the model must answer), the
 * run's deadline (its signal aborts the calls), and the spend limits: before the calls of a round
 * run, the reservation is extended to cover their price and the next round's worst case; when
 * the headroom cannot, the calls are answered "budget exhausted" and the answer ends with the
 * finish reason `length`. A round that mixes server calls with calls to the caller's own tools
 * runs the server calls, then ends the loop: the caller's calls go back to it as usual, after the
 * server calls' results (they are held until the round has ended, so no format shows a result
 * after the caller's calls).
 *
 * Tools the provider runs itself (`request.nativeServerTools`) arrive from the adapter as
 * server-tool parts carrying the provider's record of them. The loop never runs them: it passes
 * them on (without the record, which goes into the turn the next round re-sends), prices each
 * completed call at the serving model's catalog price, counts it against `max_uses` and
 * `max_tool_calls` (the next round asks the provider for no more than what is left), and records
 * it with the gateway's own calls. A round the provider paused (`pause`, Anthropic's `pause_turn`)
 * is resumed: the next round re-sends the paused turn as the last message, within the same bounds
 * of rounds and spend as any other round; the client sees one answer.
 */
import type {
  AssistantContentPart,
  CanonicalMessage,
  CanonicalRequest,
  CanonicalStreamPart,
  CanonicalUsage,
  NativeServerTool,
  ServerToolActivation,
  ServerToolCall,
  ServerToolId,
  ServerToolResult,
  ServerToolSource,
  ToolResultPart,
} from "../canonical/index.js";
import { HeldParts } from "../providers/shared/held-parts.js";
import type { ExecutedToolCall } from "./admitted-generation.js";
import { createSourceKey, findCitations } from "./find-citations.js";
import type { ServerToolExecution, ServerToolSession } from "./ports.js";

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

interface PendingCall {
  call: ServerToolCall;
  /** The model's own id for the call (the next round's tool result answers it). */
  upstreamId: string;
  argumentsJson: string;
  /** Set when the call is answered without running (a limit). */
  refusal?: { code: "max_uses_exceeded" | "budget_exhausted"; message: string };
}

const ROUND_LIMIT_MESSAGE =
  "Not run: this request has used all the server-tool rounds it may. Answer with what you have.";
const BUDGET_MESSAGE =
  "Not run: the remaining spending limit of this API key cannot pay for it. Answer with what you have.";

export class ToolLoop {
  /** Every call executed (or answered with a limit), in the order they ran. */
  readonly executed: ExecutedToolCall[] = [];
  /** Tool cost in all, micro-USD, and per tool. */
  toolCostMicroUsd = 0;
  readonly toolCosts: Record<string, number> = {};
  /** Calls made per tool (refused ones included), for usage counters. */
  readonly callCounts: Partial<Record<ServerToolId, number>> = {};
  /** The round being received (1-based). */
  round = 1;

  private readonly activations: ReadonlyMap<ServerToolId, ServerToolActivation>;
  private readonly uses = new Map<ServerToolId, number>();
  private callsInAll = 0;
  private callSequence = 0;
  private readonly sources = new Map<string, ServerToolSource>();
  // The round being received.
  private content: AssistantContentPart[] = [];
  private calls: PendingCall[] = [];
  private clientCalls = 0;
  private readonly hiddenInputs = new Set<string>();
  /** The caller's own calls of the round, passed on once the server calls have their results. */
  private readonly heldClientParts = new HeldParts();
  private readonly clientIndexes = new Map<string, number>();
  /** The round's open text and reasoning blocks, in pieces joined once at their end. */
  private readonly texts = new Map<string, string[]>();
  private readonly reasonings = new Map<string, string[]>();
  private finishPart?: Extract<CanonicalStreamPart, { type: "finish" }>;
  /** Only the first round's metadata reaches the client. */
  private metadataSent = false;
  /** Price of one completed call of each tool the serving route's provider runs itself. */
  private nativePrices: Partial<Record<ServerToolId, number>> = {};
  /** Native calls seen, until their result comes (a paused turn's last call: in the next round). */
  private readonly nativeCalls = new Map<string, { call: ServerToolCall; startedAt: number }>();

  constructor(
    private readonly session: ServerToolSession,
    /** The request of the round being received (the first one includes the tool definitions). */
    private request: CanonicalRequest,
    private readonly options: ToolLoopOptions,
  ) {
    this.activations = new Map(request.serverTools.map((activation) => [activation.id, activation]));
  }

  /** The request the current round was sent (for estimates of its prompt). */
  get roundRequest(): CanonicalRequest {
    return this.request;
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
    if (this.round !== 1) return;
    this.request = request;
    this.nativePrices = {};
    for (const [tool, price] of Object.entries(nativePrices)) {
      if (price !== undefined) this.nativePrices[tool as ServerToolId] = price.pricePerCallMicroUsd;
    }
  }

  /** What the client sees of one upstream part of the current round (possibly nothing). */
  transform(part: CanonicalStreamPart): CanonicalStreamPart[] {
    switch (part.type) {
      case "response-metadata":
        if (this.metadataSent) return [];
        this.metadataSent = true;
        return [part];
      case "text-start": {
        const id = this.blockId(part.id);
        this.texts.set(id, []);
        return [{ type: "text-start", id }];
      }
      case "text-delta": {
        const id = this.blockId(part.id);
        addPiece(this.texts, id, part.delta);
        return [{ type: "text-delta", id, delta: part.delta }];
      }
      case "text-end": {
        const id = this.blockId(part.id);
        const text = this.texts.get(id)?.join("") ?? "";
        this.texts.delete(id);
        if (text !== "") this.content.push({ type: "text", text });
        const out: CanonicalStreamPart[] = findCitations(text, this.sources).map((citation) => ({
          type: "citation",
          id,
          citation,
        }));
        out.push({ type: "text-end", id });
        return out;
      }
      case "reasoning-start": {
        const id = this.blockId(part.id);
        this.reasonings.set(id, []);
        return [{ type: "reasoning-start", id }];
      }
      case "reasoning-delta": {
        const id = this.blockId(part.id);
        addPiece(this.reasonings, id, part.delta);
        return [{ type: "reasoning-delta", id, delta: part.delta }];
      }
      case "reasoning-end": {
        const id = this.blockId(part.id);
        const text = this.reasonings.get(id)?.join("") ?? "";
        this.reasonings.delete(id);
        if (text !== "" || part.providerState !== undefined) {
          this.content.push(
            part.providerState === undefined
              ? { type: "reasoning", text }
              : { type: "reasoning", text, providerState: part.providerState },
          );
        }
        const ended = { ...part };
        ended.id = id;
        return [ended];
      }
      case "tool-input-start": {
        if (this.session.toolNamed(part.name) !== undefined) {
          this.hiddenInputs.add(part.id);
          return [];
        }
        const started = { ...part };
        started.index = this.clientIndex(part.id);
        this.heldClientParts.push(started);
        return [];
      }
      case "tool-input-delta":
      case "tool-input-end":
        if (!this.hiddenInputs.has(part.id)) this.heldClientParts.push(part);
        return [];
      case "tool-call": {
        this.content.push({
          type: "tool-call",
          id: part.id,
          name: part.name,
          arguments: part.arguments,
          ...(part.providerState === undefined ? {} : { providerState: part.providerState }),
        });
        const tool = this.session.toolNamed(part.name);
        if (tool === undefined) {
          this.clientCalls += 1;
          const held = { ...part };
          held.index = this.clientIndex(part.id);
          this.heldClientParts.push(held);
          return [];
        }
        const call: ServerToolCall = {
          id: `hi${this.options.requestId.replaceAll("-", "x")}_${++this.callSequence}`,
          tool,
          input: this.session.readInput(tool, part.arguments),
          events: this.request.toolEvents || this.activations.get(tool)?.events === true,
        };
        this.calls.push({ call, upstreamId: part.id, argumentsJson: part.arguments });
        return [{ type: "server-tool-call", call }];
      }
      case "server-tool-call":
        return [this.acceptNativeCall(part)];
      case "server-tool-result":
        return [this.acceptNativeResult(part)];
      case "citation":
        return [{ type: "citation", id: this.blockId(part.id), citation: part.citation }];
      case "usage":
        return [];
      case "finish":
        this.finishPart = part;
        return [];
      default:
        return [part];
    }
  }

  /** A call the provider made itself: counted against the bounds, its record kept for the next round. */
  private acceptNativeCall(
    part: Extract<CanonicalStreamPart, { type: "server-tool-call" }>,
  ): CanonicalStreamPart {
    const call: ServerToolCall = {
      id: part.call.id,
      tool: part.call.tool,
      input: part.call.input,
      events: this.wantsEvents(part.call.tool),
    };
    this.uses.set(call.tool, (this.uses.get(call.tool) ?? 0) + 1);
    this.callsInAll += 1;
    if (part.providerState !== undefined)
      this.content.push({ type: "native-tool", providerState: part.providerState });
    this.nativeCalls.set(call.id, { call, startedAt: performance.now() });
    return { type: "server-tool-call", call };
  }

  /** A result of the provider's own call: priced from the catalog (a failed call costs nothing) and recorded. */
  private acceptNativeResult(
    part: Extract<CanonicalStreamPart, { type: "server-tool-result" }>,
  ): CanonicalStreamPart {
    const seen = this.nativeCalls.get(part.result.callId);
    this.nativeCalls.delete(part.result.callId);
    const now = performance.now();
    const startedAt = seen?.startedAt ?? now;
    const completed = part.result.status === "completed";
    const input = seen?.call.input ?? part.result.input;
    const result: ServerToolResult = { ...part.result };
    result.input = input;
    result.costMicroUsd = completed ? (this.nativePrices[part.result.tool] ?? 0) : 0;
    result.durationMs = Math.round(now - startedAt);
    result.events = seen?.call.events ?? this.wantsEvents(part.result.tool);
    // A paused turn's last call is answered in the next round, whose response does not repeat it.
    const output = result.output;
    if (output?.kind === "search" && output.query === "" && typeof input.query === "string") {
      result.output = { kind: "search", query: input.query, sources: output.sources };
    }
    if (part.providerState !== undefined)
      this.content.push({ type: "native-tool", providerState: part.providerState });
    // Not a source of the link finder: the provider cites its own results, and a link to one
    // would be cited twice.
    this.account(result, startedAt, true);
    return { type: "server-tool-result", result };
  }

  private wantsEvents(tool: ServerToolId): boolean {
    return this.request.toolEvents || this.activations.get(tool)?.events === true;
  }

  /** true when the round that ended called a server tool: `finishRound` has calls to run. */
  get roundCalledTools(): boolean {
    return this.calls.length > 0;
  }

  /** The finish the upstream gave the round that ended (undefined when it gave none). */
  get roundFinish(): Extract<CanonicalStreamPart, { type: "finish" }> | undefined {
    return this.finishPart;
  }

  /**
   * After the round's last part: runs its server calls, yields their results, and returns what
   * comes next. `signal` aborts the calls (client gone, deadline).
   */
  async *finishRound(
    reserve: ReserveRound,
    signal: AbortSignal,
  ): AsyncGenerator<CanonicalStreamPart, RoundDecision> {
    const upstreamFinish = this.finishPart ?? { type: "finish", reason: "stop" };
    const calls = this.calls;
    if (calls.length === 0) {
      yield* this.releaseClientParts();
      if (upstreamFinish.reason === "pause" && (this.request.nativeServerTools?.length ?? 0) > 0) {
        return await this.resumePausedTurn(reserve);
      }
      return { kind: "end", finish: upstreamFinish };
    }
    const mixed = this.clientCalls > 0;
    const lastRound = this.round >= this.options.maxRounds;
    let continues = !mixed && !lastRound;

    for (const pending of calls) {
      if (lastRound && !mixed) {
        pending.refusal = { code: "max_uses_exceeded", message: ROUND_LIMIT_MESSAGE };
      } else {
        pending.refusal = this.takeUse(pending.call.tool);
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
      this.calls = [];
      yield* this.releaseClientParts();
      if (mixed) return { kind: "end", finish: upstreamFinish };
      // The model wanted more than the request may give: its answer is cut short, as by a cap.
      const rawReason = budgetExhausted ? "server_tool_budget" : "server_tool_rounds";
      return { kind: "end", finish: { type: "finish", reason: "length", rawReason } };
    }
    const request = this.createNextRequest(toolResults);
    this.startRound(request);
    return { kind: "next", request };
  }

  /**
   * The provider paused its turn (it was running its own tools for long): the next round re-sends
   * the paused turn as the last message, so the provider carries on with it. A round or budget
   * bound ends the answer as for the gateway's own calls.
   */
  private async resumePausedTurn(reserve: ReserveRound): Promise<RoundDecision> {
    if (this.round >= this.options.maxRounds) {
      return { kind: "end", finish: { type: "finish", reason: "length", rawReason: "server_tool_rounds" } };
    }
    const messages: CanonicalMessage[] = [
      ...this.request.messages,
      { role: "assistant", content: this.content },
    ];
    const request = this.continueRequest(messages);
    if (!(await reserve(0, { request, resultTokens: 0 }))) {
      return { kind: "end", finish: { type: "finish", reason: "length", rawReason: "server_tool_budget" } };
    }
    this.startRound(request);
    return { kind: "next", request };
  }

  /** The next round's request: this round's with `messages` and the native tools left. */
  private continueRequest(messages: CanonicalMessage[]): CanonicalRequest {
    const request = { ...this.request };
    request.messages = messages;
    const nativeServerTools = this.nextNativeTools();
    if (nativeServerTools !== undefined) request.nativeServerTools = nativeServerTools;
    return request;
  }

  /**
   * The native tools of the next round (undefined when this round has none), asking the provider
   * for no more calls than the bounds leave; a tool with none left is not sent, unless the turn
   * has a call of it still to answer (a paused turn's last call), which the provider runs as part
   * of the next round.
   */
  private nextNativeTools(): NativeServerTool[] | undefined {
    const current = this.request.nativeServerTools;
    if (current === undefined) return undefined;
    const unanswered = new Map<ServerToolId, number>();
    for (const { call } of this.nativeCalls.values()) {
      unanswered.set(call.tool, (unanswered.get(call.tool) ?? 0) + 1);
    }
    const tools: NativeServerTool[] = [];
    for (const tool of current) {
      const activation = this.activations.get(tool.tool);
      const left = Math.min(
        (activation?.maxUses ?? Number.POSITIVE_INFINITY) - (this.uses.get(tool.tool) ?? 0),
        (this.request.maxToolCalls ?? Number.POSITIVE_INFINITY) - this.callsInAll,
      );
      const pending = unanswered.get(tool.tool) ?? 0;
      const maxUses = Math.max(pending, Math.min(this.options.maxNativeCallsPerRound, left + pending));
      if (maxUses >= 1) {
        const next = { ...tool };
        next.maxUses = maxUses;
        tools.push(next);
      }
    }
    return tools;
  }

  private *releaseClientParts(): Generator<CanonicalStreamPart> {
    yield* this.heldClientParts.take();
  }

  /** Refusal when the tool's `max_uses` or the request's `max_tool_calls` is spent; else counts the use. */
  private takeUse(tool: ServerToolId): PendingCall["refusal"] {
    const used = this.uses.get(tool) ?? 0;
    const maxUses = this.activations.get(tool)?.maxUses ?? Number.POSITIVE_INFINITY;
    if (used >= maxUses) {
      return {
        code: "max_uses_exceeded",
        message: `Not run: ${tool} may be used at most ${maxUses} times in this request. Answer with what you have.`,
      };
    }
    const maxToolCalls = this.request.maxToolCalls;
    if (maxToolCalls !== undefined && this.callsInAll >= maxToolCalls) {
      return {
        code: "max_uses_exceeded",
        message: `Not run: this request allows at most ${maxToolCalls} tool calls. Answer with what you have.`,
      };
    }
    this.uses.set(tool, used + 1);
    this.callsInAll += 1;
    return undefined;
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
    this.account(result, startedAt, false, execution.costsByTool);
    this.collectSources(result);
    return result;
  }

  /** Counts an ended call for usage, cost and the record. */
  private account(
    result: ServerToolResult,
    startedAt: number,
    native: boolean,
    shares: Partial<Record<ServerToolId, number>> = { [result.tool]: result.costMicroUsd },
  ): void {
    this.callCounts[result.tool] = (this.callCounts[result.tool] ?? 0) + 1;
    this.toolCostMicroUsd += result.costMicroUsd;
    // Part of a call's cost may belong to another tool's line (web_fetch of a PDF pays pdf pages).
    for (const [tool, micro] of Object.entries(shares)) {
      if (micro !== undefined && micro > 0) this.toolCosts[tool] = (this.toolCosts[tool] ?? 0) + micro;
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

  private collectSources(result: ServerToolResult): void {
    const output = result.output;
    if (output === undefined) return;
    if (output.kind === "search") {
      for (const source of output.sources) this.sources.set(createSourceKey(source.url), source);
    } else if (output.kind === "fetch") {
      const source: ServerToolSource = {
        url: output.finalUrl,
        title: output.title,
        snippet: output.text.slice(0, 150),
        pageAge: null,
      };
      this.sources.set(createSourceKey(output.finalUrl), source);
      this.sources.set(createSourceKey(output.url), source);
    }
  }

  /** The round that follows: the model's turn and the tools' results appended. */
  private createNextRequest(toolResults: ToolResultPart[]): CanonicalRequest {
    const messages: CanonicalMessage[] = [
      ...this.request.messages,
      { role: "assistant", content: this.content },
      { role: "tool", content: toolResults },
    ];
    const next = this.continueRequest(messages);
    const choice = this.request.toolChoice;
    // A forced tool call was made in this round; forcing it again would loop until the cap.
    if (choice?.type === "required" || choice?.type === "tool") next.toolChoice = { type: "auto" };
    // The last round may call nothing that would need one more: offered no tool, the model answers.
    const definitionsOnly = this.request.tools.every(
      (tool) => this.session.toolNamed(tool.name) !== undefined,
    );
    if (this.round + 1 >= this.options.maxRounds && definitionsOnly) next.toolChoice = { type: "none" };
    return next;
  }

  private startRound(request: CanonicalRequest): void {
    this.request = request;
    this.round += 1;
    this.content = [];
    this.calls = [];
    this.clientCalls = 0;
    this.hiddenInputs.clear();
    this.heldClientParts.take();
    this.clientIndexes.clear();
    this.texts.clear();
    this.reasonings.clear();
    this.finishPart = undefined;
  }

  /** Block ids of later rounds are made distinct from the first round's (adapters restart theirs). */
  private blockId(id: string): string {
    return this.round === 1 ? id : `r${this.round}:${id}`;
  }

  /** The caller's calls are numbered among themselves: server calls in the same turn take no index. */
  private clientIndex(upstreamId: string): number {
    let index = this.clientIndexes.get(upstreamId);
    if (index === undefined) {
      index = this.clientIndexes.size;
      this.clientIndexes.set(upstreamId, index);
    }
    return index;
  }
}

/** Usage of two rounds together. */
export function addUsage(a: CanonicalUsage, b: CanonicalUsage): CanonicalUsage {
  return {
    inputTokens: a.inputTokens + b.inputTokens,
    outputTokens: a.outputTokens + b.outputTokens,
    cachedInputTokens: a.cachedInputTokens + b.cachedInputTokens,
    cacheWriteTokens: a.cacheWriteTokens + b.cacheWriteTokens,
    cacheWrite1hTokens: a.cacheWrite1hTokens + b.cacheWrite1hTokens,
    reasoningTokens: a.reasoningTokens + b.reasoningTokens,
  };
}

function addPiece(blocks: Map<string, string[]>, id: string, piece: string): void {
  const pieces = blocks.get(id);
  if (pieces === undefined) blocks.set(id, [piece]);
  else pieces.push(piece);
}

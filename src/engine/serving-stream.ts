/**
 * The stream of a streamed run's serving attempt: opened with its first part awaited
 * (open-stream.ts), read part by part with the run's stop and the client's leaving applied, and
 * opened anew on the serving route for each later round of the server-tool loop.
 */
import type { CanonicalStreamPart } from "../canonical/index.js";
import { type GatewayError, toGatewayError } from "../errors/gateway-error.js";
import type { ProviderAdapter, UpstreamCall } from "../providers/provider-adapter.js";
import type { AdmittedGeneration } from "./admitted-generation.js";
import { openStream } from "./open-stream.js";
import type { RunControl } from "./run-control.js";
import type { ToolRounds } from "./run-tool-rounds.js";
import type { RunUsage } from "./run-usage.js";
import { toUpstreamCall } from "./to-upstream-call.js";

export class ServingStream {
  /** The response started before the upstream's first part arrived. */
  slow = false;
  private iterator?: AsyncIterator<CanonicalStreamPart>;
  private pendingFirst?: Promise<IteratorResult<CanonicalStreamPart>>;

  constructor(
    private readonly admitted: AdmittedGeneration,
    private readonly control: RunControl,
    private readonly usage: RunUsage,
  ) {}

  /**
   * Calls `adapter` and waits up to `firstPartWaitMs` for the first part. The attempt's failure
   * (the run's stop first), or undefined when the stream serves (`slow`: without its first part).
   */
  async open(
    adapter: ProviderAdapter,
    call: UpstreamCall,
    firstPartWaitMs: number,
  ): Promise<GatewayError | undefined> {
    const iterator = adapter.stream(call)[Symbol.asyncIterator]();
    const opened = await openStream(iterator, firstPartWaitMs);
    const error = this.control.stoppedWith ?? (opened.kind === "failed" ? opened.error : undefined);
    if (error !== undefined) {
      void iterator.return?.().catch(() => {});
      return error;
    }
    if (opened.kind === "opened") {
      this.slow = opened.slow;
      this.iterator = iterator;
      this.pendingFirst = opened.first;
    }
    return undefined;
  }

  /** The serving attempt failed before its first part: the run fails over from nothing. */
  forget(): void {
    this.iterator = undefined;
    this.pendingFirst = undefined;
    this.slow = false;
  }

  /** The first part (see `take`); undefined when no stream serves. */
  first(): Promise<CanonicalStreamPart | undefined> | undefined {
    return this.pendingFirst === undefined ? undefined : this.take(this.pendingFirst);
  }

  /** The next part (see `take`). */
  next(): Promise<CanonicalStreamPart | undefined> {
    return this.take(this.iterator!.next());
  }

  /** Ends the upstream stream (the client left, or the consumer stopped early). */
  close(): void {
    void this.iterator?.return?.().catch(() => {});
  }

  /**
   * A round of the tool loop has ended: its server calls run (their results are yielded,
   * run-tool-rounds.ts), then the next round's stream opens on the serving route and its first
   * part is returned, or the answer's end was yielded and undefined is returned.
   */
  async *nextRound(rounds: ToolRounds): AsyncGenerator<CanonicalStreamPart, CanonicalStreamPart | undefined> {
    const { control, admitted } = this;
    const request = yield* rounds.finishRound();
    if (request === undefined || control.cancelled) return undefined;
    if (control.stoppedWith) return toErrorPart(control.stoppedWith);
    this.usage.roundOpen = true;
    const call: UpstreamCall = toUpstreamCall(admitted.call, request, control.signal);
    this.iterator = admitted.adapter.stream(call)[Symbol.asyncIterator]();
    return await this.next();
  }

  /**
   * The next part to pass on: undefined at the end (or once cancelled), an `error` part for a
   * failure, and once stopped, the stop's error instead of whatever the aborted upstream gave.
   */
  private async take(
    step: Promise<IteratorResult<CanonicalStreamPart>>,
  ): Promise<CanonicalStreamPart | undefined> {
    const { control } = this;
    let part: CanonicalStreamPart | undefined;
    try {
      const result = await step;
      part = result.done ? undefined : result.value;
    } catch (thrown) {
      if (control.cancelled) return undefined;
      part = toErrorPart(toGatewayError(thrown));
    }
    if (control.cancelled) return undefined;
    // A stop after the upstream finished changes nothing: the stream is complete.
    if (control.stoppedWith === undefined || this.usage.finishReason !== undefined) return part;
    return toErrorPart(control.stoppedWith);
  }
}

/** A failure as the part that ends the stream: the GatewayError itself (one error form). */
export function toErrorPart(error: GatewayError): CanonicalStreamPart {
  return { type: "error", error };
}

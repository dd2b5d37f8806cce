/**
 * One traced request's identity in its trace, fixed when it arrives: the trace it belongs to (the
 * caller's, or a new one), the id of its own span, and what each upstream attempt was told. The
 * spans themselves are built after the request ended (build-request-spans.ts), from these ids and
 * the timings the request recorded, so nothing on the request's path waits for tracing.
 */
import type { AttemptTracer } from "../engine/admitted-generation.js";
import {
  createSpanId,
  createTraceId,
  formatTraceparent,
  parseTraceparent,
  type RemoteSpan,
  readTracestate,
} from "./trace-context.js";

export class RequestTrace implements AttemptTracer {
  readonly traceId: string;
  /** The id of the gateway's span for the whole request. */
  readonly spanId = createSpanId();
  /** Each attempt's span id and start (performance.now()), by its index in the outcome's attempts. */
  readonly attemptSpanIds: string[] = [];
  readonly attemptStartedAt: number[] = [];

  private constructor(
    /** The caller's span, when its `traceparent` was valid. */
    readonly parent: RemoteSpan | undefined,
    private readonly tracestate: string | undefined,
  ) {
    this.traceId = parent?.traceId ?? createTraceId();
  }

  /** From the request's `traceparent` and `tracestate` headers (absent or invalid: a new trace). */
  static fromHeaders(
    traceparent: string | string[] | undefined,
    tracestate: string | string[] | undefined,
  ): RequestTrace {
    const parent = parseTraceparent(traceparent);
    return new RequestTrace(parent, parent === undefined ? undefined : readTracestate(tracestate));
  }

  /** A caller that did not record its span is not recorded either; one without a trace always is. */
  get sampled(): boolean {
    return this.parent?.sampled ?? true;
  }

  /** The attempt's upstream call is a child of the attempt's span, in the same trace. */
  startAttempt(index: number): Readonly<Record<string, string>> {
    const spanId = createSpanId();
    this.attemptSpanIds[index] = spanId;
    this.attemptStartedAt[index] = performance.now();
    const traceparent = formatTraceparent(this.traceId, spanId, this.sampled);
    return this.tracestate === undefined ? { traceparent } : { traceparent, tracestate: this.tracestate };
  }
}

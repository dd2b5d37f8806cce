/**
 * Request tracing (docs/operations.md, "Traces"), on only when an OTLP endpoint is configured.
 * The OpenTelemetry modules are imported here, once at start, and only then: with tracing off no
 * OpenTelemetry module is loaded and a request costs nothing for it.
 *
 * A traced request gets its trace identity on arrival (request-trace.ts: ids only, no SDK call);
 * its spans are built and queued once it has ended, never on the request's path.
 */
import type { TracingSettings } from "../config/settings.js";
import type { Logger } from "../logging/logger.js";
import type { ObservedRequest } from "./observed-request.js";
import { RequestTrace } from "./request-trace.js";

/** Export still going on at shutdown is given up after this. */
const SHUTDOWN_DEADLINE_MS = 5_000;

export interface RequestTracer {
  /** A request arrived with these headers: its place in its trace. */
  startRequest(
    traceparent: string | string[] | undefined,
    tracestate: string | string[] | undefined,
  ): RequestTrace;
  /** A request ended: its spans are queued for export when its trace is recorded. */
  record(request: ObservedRequest): void;
  /** Exports what is queued (within a deadline) and stops. */
  shutdown(): Promise<void>;
}

export async function loadRequestTracer(settings: TracingSettings, logger: Logger): Promise<RequestTracer> {
  const [{ createOtlpSpanPipeline }, { buildRequestSpans }] = await Promise.all([
    import("./otlp-span-pipeline.js"),
    import("./build-request-spans.js"),
  ]);
  const pipeline = createOtlpSpanPipeline(settings, logger);
  return {
    startRequest: RequestTrace.fromHeaders,
    record(request) {
      const trace = request.trace;
      if (trace === undefined || !trace.sampled) return;
      pipeline.submit(buildRequestSpans(request, trace, pipeline.origin));
    },
    async shutdown() {
      let timer: NodeJS.Timeout | undefined;
      const deadline = new Promise<void>((resolve) => {
        timer = setTimeout(resolve, SHUTDOWN_DEADLINE_MS);
      });
      await Promise.race([pipeline.shutdown().catch(() => {}), deadline]);
      clearTimeout(timer);
    },
  };
}

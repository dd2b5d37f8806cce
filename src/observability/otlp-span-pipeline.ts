/**
 * Where finished spans go: the OpenTelemetry SDK's batch processor in front of its OTLP/HTTP
 * exporter. Spans wait in a bounded queue (2,048 by default; beyond that they are dropped, never
 * held) and leave in batches every few seconds, each export under the exporter's deadline
 * (10 s, `OTEL_EXPORTER_OTLP_TIMEOUT`); `OTEL_EXPORTER_OTLP_HEADERS` and the `OTEL_BSP_*`
 * variables apply as the SDK reads them. A failed export is logged at most once a minute.
 *
 * Loaded only when tracing is on (request-tracer.ts).
 */
import { type ExportResult, ExportResultCode } from "@opentelemetry/core";
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-http";
import {
  defaultResource,
  detectResources,
  envDetector,
  resourceFromAttributes,
} from "@opentelemetry/resources";
import { BatchSpanProcessor, type ReadableSpan, type SpanExporter } from "@opentelemetry/sdk-trace-base";
import { ATTR_SERVICE_NAME } from "@opentelemetry/semantic-conventions";
import type { TracingSettings } from "../config/settings.js";
import type { Logger } from "../logging/logger.js";
import type { SpanOrigin } from "./build-request-spans.js";

/** At most one warning about failed exports per this long. */
const EXPORT_WARNING_INTERVAL_MS = 60_000;

export interface SpanPipeline {
  /** The resource and scope every span carries. */
  origin: SpanOrigin;
  /** Queues finished spans for export; never waits. */
  submit(spans: readonly ReadableSpan[]): void;
  /** Exports what is queued, then stops. */
  shutdown(): Promise<void>;
}

export function createOtlpSpanPipeline(settings: TracingSettings, logger: Logger): SpanPipeline {
  const exporter = new WarningSpanExporter(new OTLPTraceExporter({ url: settings.endpoint }), logger);
  const processor = new BatchSpanProcessor(exporter);
  // OTEL_RESOURCE_ATTRIBUTES adds to the resource; the service name is the gateway's setting.
  const resource = defaultResource()
    .merge(detectResources({ detectors: [envDetector] }))
    .merge(resourceFromAttributes({ [ATTR_SERVICE_NAME]: settings.serviceName }));
  return {
    origin: { resource, instrumentationScope: { name: "hi-gateway" } },
    submit(spans) {
      for (const span of spans) processor.onEnd(span);
    },
    shutdown: () => processor.shutdown(),
  };
}

/** The exporter, with its failures logged (the SDK would report them to a diagnostic logger nobody reads). */
class WarningSpanExporter implements SpanExporter {
  private lastWarningAt = Number.NEGATIVE_INFINITY;
  private failedSinceWarning = 0;

  constructor(
    private readonly exporter: SpanExporter,
    private readonly logger: Logger,
  ) {}

  export(spans: ReadableSpan[], done: (result: ExportResult) => void): void {
    this.exporter.export(spans, (result) => {
      if (result.code !== ExportResultCode.SUCCESS) this.warn(spans.length, result.error);
      done(result);
    });
  }

  shutdown(): Promise<void> {
    return this.exporter.shutdown();
  }

  forceFlush(): Promise<void> {
    return this.exporter.forceFlush?.() ?? Promise.resolve();
  }

  private warn(spans: number, error: Error | undefined): void {
    this.failedSinceWarning += spans;
    const now = performance.now();
    if (now - this.lastWarningAt < EXPORT_WARNING_INTERVAL_MS) return;
    this.lastWarningAt = now;
    // The message only: the error object may carry the request's headers.
    this.logger.warn(
      { droppedSpans: this.failedSinceWarning, reason: error?.message ?? "unknown" },
      "trace export failed; spans dropped",
    );
    this.failedSinceWarning = 0;
  }
}

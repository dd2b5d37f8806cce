/**
 * The gateway's Prometheus metrics (docs/operations.md, "Metrics"). Every request is counted once
 * it has ended, from the record its log line is written from (`record`): a handful of counter and
 * histogram updates, after the response closed, never on the request's path. Gauges of the
 * instance's state (requests and reservations in flight, circuit breakers) are read at scrape time.
 *
 * Every label value comes from the catalog or a fixed list, so the number of series is bounded by
 * the configuration: a model a caller names is a label only when it is a catalog slug (else
 * `other`), codes outside the error catalog are `other`. No key, id or text a caller wrote is ever
 * a label.
 */

import type { ServerToolId } from "../canonical/request.js";
import type { ServerToolErrorCode } from "../canonical/server-tool.js";
import type { BreakerState } from "../engine/circuit-breaker.js";
import type { GenerationAttempt } from "../engine/generation-record.js";
import { ERROR_CODES } from "../errors/catalog.js";
import { CounterCells, type CounterSeries, HistogramCells, type HistogramSeries } from "./metric-cells.js";
import type { ObservedRequest } from "./observed-request.js";
import { Gauge, Registry } from "./prom-client-classes.js";
import { type RuntimeMetrics, registerRuntimeMetrics } from "./runtime-metrics.js";

/** What the metrics read from the running instance. */
export interface MetricsSources {
  /** The catalog's model slugs. */
  catalogModels: readonly string[];
  /** Requests being served now. */
  requestsInFlight(): number;
  /** Admitted generations not settled yet, each holding its reservation. */
  generationsInFlight(): number;
  /** Bytes of complete answers waiting for clients that have not read them (http/router/held-answers.ts). */
  heldAnswerBytes(): number;
  /** Each catalog route's circuit-breaker state. */
  routeBreakerStates(): ReadonlyArray<{ provider: string; upstreamModel: string; state: BreakerState }>;
}

const PREFIX = "hi_gateway_";
/** Whole requests, upstream calls and tool calls: milliseconds to minutes. */
const DURATION_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300];
/** The gateway's own share of a request: fractions of a millisecond to a second. */
const OVERHEAD_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1];
const BREAKER_STATES: readonly BreakerState[] = ["closed", "half-open", "open"];
const OTHER = "other";
/** The label of a request no route matched. */
const UNMATCHED = "unmatched";

// Records, so a tool or code added to the types must be added here (the compiler says so).
const SERVER_TOOLS: Record<ServerToolId, true> = {
  web_search: true,
  web_fetch: true,
  pdf: true,
  datetime: true,
  image: true,
};
const SERVER_TOOL_ERROR_CODES: Record<ServerToolErrorCode, true> = {
  invalid_input: true,
  max_uses_exceeded: true,
  budget_exhausted: true,
  unavailable: true,
  too_many_requests: true,
  url_not_allowed: true,
  url_not_accessible: true,
  unsupported_content_type: true,
};

/** The series a request of one shape updates (see `requestSeriesFor`). */
interface RequestSeries {
  requests: CounterSeries;
  duration: HistogramSeries;
  /** Generations only. */
  firstByte: HistogramSeries | undefined;
  overhead: HistogramSeries | undefined;
}

/** The series an attempt of one route and result updates. */
interface AttemptSeries {
  attempts: CounterSeries;
  /** Absent for a route its breaker skipped (no call was made). */
  duration: HistogramSeries | undefined;
  /** Failed attempts only. */
  errors: CounterSeries | undefined;
  fallbacks: CounterSeries;
}

/** The billed usage series of one model and provider. */
interface UsageSeries {
  input: CounterSeries;
  output: CounterSeries;
  cachedInput: CounterSeries;
  cacheWriteInput: CounterSeries;
  reasoning: CounterSeries;
  cost: CounterSeries;
}

export class GatewayMetrics {
  readonly registry = new Registry();
  private readonly catalogModels: ReadonlySet<string>;
  private readonly errorCodes: ReadonlySet<string> = new Set(ERROR_CODES);
  private readonly runtime: RuntimeMetrics;

  private readonly requests;
  private readonly requestDuration;
  private readonly timeToFirstByte;
  private readonly overhead;
  private readonly upstreamAttempts;
  private readonly upstreamDuration;
  private readonly upstreamErrors;
  private readonly fallbackAttempts;
  private readonly tokens;
  private readonly cost;
  private readonly toolCalls;
  private readonly toolDuration;
  private readonly responseCache;
  /** Series found by a request's, an attempt's and a usage's shape (bounded like the labels). */
  private readonly requestSeries = new Map<string, RequestSeries>();
  private readonly attemptSeries = new Map<string, AttemptSeries>();
  private readonly usageSeries = new Map<string, UsageSeries>();

  constructor(sources: MetricsSources) {
    this.catalogModels = new Set(sources.catalogModels);
    const registers = [this.registry];
    this.requests = new CounterCells({
      name: `${PREFIX}requests_total`,
      help: "Requests answered, by endpoint (route pattern), ingress format, requested catalog model, serving provider and status code.",
      labelNames: ["endpoint", "format", "model", "provider", "status_code"] as const,
      registers,
    });
    this.requestDuration = new HistogramCells({
      name: `${PREFIX}request_duration_seconds`,
      help: "Whole requests, from arrival to the response closing.",
      labelNames: ["endpoint", "format", "model"] as const,
      buckets: DURATION_BUCKETS,
      registers,
    });
    this.timeToFirstByte = new HistogramCells({
      name: `${PREFIX}time_to_first_byte_seconds`,
      help: "Generations, from arrival to the answer's head being written (a stream's headers, a JSON answer's body).",
      labelNames: ["format", "model", "stream"] as const,
      buckets: DURATION_BUCKETS,
      registers,
    });
    this.overhead = new HistogramCells({
      name: `${PREFIX}overhead_seconds`,
      help: "The gateway's own time in a generation that called an upstream: the whole request less its upstream calls.",
      labelNames: ["format", "stream"] as const,
      buckets: OVERHEAD_BUCKETS,
      registers,
    });
    this.upstreamAttempts = new CounterCells({
      name: `${PREFIX}upstream_attempts_total`,
      help: "Upstream attempts by route and outcome: ok, error, cancelled (the client left), circuit_open (skipped).",
      labelNames: ["provider", "upstream_model", "outcome"] as const,
      registers,
    });
    this.upstreamDuration = new HistogramCells({
      name: `${PREFIX}upstream_duration_seconds`,
      help: "Upstream calls by route and outcome, from the call to its last byte (a stream's whole length).",
      labelNames: ["provider", "upstream_model", "outcome"] as const,
      buckets: DURATION_BUCKETS,
      registers,
    });
    this.upstreamErrors = new CounterCells({
      name: `${PREFIX}upstream_errors_total`,
      help: "Failed upstream attempts by route and error catalog code.",
      labelNames: ["provider", "upstream_model", "code"] as const,
      registers,
    });
    this.fallbackAttempts = new CounterCells({
      name: `${PREFIX}fallback_attempts_total`,
      help: "Upstream calls made after a request's first attempt (failover to another route, or a retry), by the route called.",
      labelNames: ["provider", "upstream_model"] as const,
      registers,
    });
    this.tokens = new CounterCells({
      name: `${PREFIX}tokens_total`,
      help: "Billed tokens by catalog model, provider and type: input and output, and the parts of them that were cached_input, cache_write_input and reasoning.",
      labelNames: ["model", "provider", "type"] as const,
      registers,
    });
    this.cost = new CounterCells({
      name: `${PREFIX}cost_micro_usd_total`,
      help: "Billed cost in micro-USD (model usage and server tools) by catalog model and provider.",
      labelNames: ["model", "provider"] as const,
      registers,
    });
    this.toolCalls = new CounterCells({
      name: `${PREFIX}server_tool_calls_total`,
      help: "Server-tool calls by tool and outcome: completed, or the failure's code.",
      labelNames: ["tool", "outcome"] as const,
      registers,
    });
    this.responseCache = new CounterCells({
      name: `${PREFIX}response_cache_lookups_total`,
      help: "Requests the exact response cache was looked up for, by result: hit (answered from it at no cost) or miss.",
      labelNames: ["result"] as const,
      registers,
    });
    this.toolDuration = new HistogramCells({
      name: `${PREFIX}server_tool_duration_seconds`,
      help: "Server-tool calls by tool.",
      labelNames: ["tool"] as const,
      buckets: DURATION_BUCKETS,
      registers,
    });
    new Gauge({
      name: `${PREFIX}requests_in_flight`,
      help: "Requests this instance is serving now.",
      registers,
      collect() {
        this.set(sources.requestsInFlight());
      },
    });
    new Gauge({
      name: `${PREFIX}reservations_in_flight`,
      help: "Admitted generations not settled yet, each holding its spend reservation on this instance.",
      registers,
      collect() {
        this.set(sources.generationsInFlight());
      },
    });
    new Gauge({
      name: `${PREFIX}held_answer_bytes`,
      help: "Bytes of complete answers waiting for clients that have not read them; past limits.held_answers_bytes the longest waiting are let go.",
      registers,
      collect() {
        this.set(sources.heldAnswerBytes());
      },
    });
    new Gauge({
      name: `${PREFIX}circuit_breaker_state`,
      help: "Each catalog route's circuit breaker on this instance: 1 for its state (closed, half-open, open), 0 for the others.",
      labelNames: ["provider", "upstream_model", "state"] as const,
      registers,
      collect() {
        for (const route of sources.routeBreakerStates()) {
          for (const state of BREAKER_STATES) {
            this.set(
              { provider: route.provider, upstream_model: route.upstreamModel, state },
              route.state === state ? 1 : 0,
            );
          }
        }
      },
    });
    this.runtime = registerRuntimeMetrics(this.registry);
  }

  /** Counts one ended request (after its generation, if any, settled). */
  record(request: ObservedRequest): void {
    const model = this.modelLabel(request.model);
    const settled = request.settledGeneration;
    const series = this.requestSeriesFor(request, model, settled?.served?.provider ?? "");
    const durationMs = request.endedAt - request.startedAt;
    series.requests.value++;
    series.duration.observe(durationMs / 1000);
    if (series.firstByte !== undefined && request.firstByteAt !== undefined) {
      series.firstByte.observe((request.firstByteAt - request.startedAt) / 1000);
    }
    if (settled === undefined) return;
    if (settled.cache !== undefined) this.responseCache.series({ result: settled.cache }).value++;
    const { outcome } = settled;
    const attempts = outcome.attempts ?? [];
    let upstreamMs = 0;
    let called = 0;
    for (let index = 0; index < attempts.length; index++) {
      const attempt = attempts[index];
      const route = this.attemptSeriesFor(attempt);
      route.attempts.value++;
      if (route.duration === undefined) continue; // skipped by its breaker: no call
      called++;
      upstreamMs += attempt.latencyMs;
      route.duration.observe(attempt.latencyMs / 1000);
      if (route.errors !== undefined) route.errors.value++;
      if (index > 0) route.fallbacks.value++;
    }
    if (called > 0 && series.overhead !== undefined) {
      series.overhead.observe(Math.max(0, durationMs - upstreamMs) / 1000);
    }
    // The usage is billed at the serving route, or the one in flight when the client left.
    const billed: GenerationAttempt | undefined = settled.served ?? attempts.at(-1);
    const usage = this.usageSeriesFor(billed?.model ?? model, billed?.provider ?? "");
    usage.input.value += Math.max(0, outcome.tokensPrompt);
    usage.output.value += Math.max(0, outcome.tokensCompletion);
    usage.cachedInput.value += Math.max(0, outcome.tokensCachedPrompt);
    usage.cacheWriteInput.value += Math.max(0, outcome.tokensCacheWrite);
    usage.reasoning.value += Math.max(0, outcome.tokensReasoning);
    usage.cost.value += Math.max(0, outcome.costMicroUsd);
    for (const call of settled.toolCalls) {
      const tool = Object.hasOwn(SERVER_TOOLS, call.tool) ? call.tool : OTHER;
      const failure = call.errorCode !== undefined && Object.hasOwn(SERVER_TOOL_ERROR_CODES, call.errorCode);
      this.toolCalls.inc({
        tool,
        outcome: call.status === "completed" ? "completed" : failure ? (call.errorCode as string) : OTHER,
      });
      this.toolDuration.observe({ tool }, call.durationMs / 1000);
    }
  }

  /**
   * The series one request updates, by the request's shape (endpoint, format, model, provider,
   * status, stream): found with one key instead of one per metric.
   */
  private requestSeriesFor(request: ObservedRequest, model: string, provider: string): RequestSeries {
    const endpoint = request.route ?? UNMATCHED;
    const format = request.format ?? "";
    const stream = String(request.stream === true);
    const statusCode = String(request.status);
    const key = `${endpoint}\u0000${format}\u0000${model}\u0000${provider}\u0000${statusCode}\u0000${stream}`;
    let series = this.requestSeries.get(key);
    if (series === undefined) {
      const generation = request.format !== undefined;
      series = {
        requests: this.requests.series({ endpoint, format, model, provider, status_code: statusCode }),
        duration: this.requestDuration.series({ endpoint, format, model }),
        firstByte: generation ? this.timeToFirstByte.series({ format, model, stream }) : undefined,
        overhead: generation ? this.overhead.series({ format, stream }) : undefined,
      };
      this.requestSeries.set(key, series);
    }
    return series;
  }

  /** The series of one attempt's route and how it ended. */
  private attemptSeriesFor(attempt: GenerationAttempt): AttemptSeries {
    const result = this.classifyAttempt(attempt.outcome);
    const code = result === "error" ? this.errorCodeLabel(attempt.outcome) : "";
    const key = `${attempt.provider}\u0000${attempt.upstreamModel}\u0000${result}\u0000${code}`;
    let series = this.attemptSeries.get(key);
    if (series === undefined) {
      const { provider, upstreamModel } = attempt;
      const route = { provider, upstream_model: upstreamModel };
      const outcome = { provider, upstream_model: upstreamModel, outcome: result };
      const called = result !== "circuit_open";
      series = {
        attempts: this.upstreamAttempts.series(outcome),
        duration: called ? this.upstreamDuration.series(outcome) : undefined,
        errors:
          result === "error"
            ? this.upstreamErrors.series({ provider, upstream_model: upstreamModel, code })
            : undefined,
        fallbacks: this.fallbackAttempts.series(route),
      };
      this.attemptSeries.set(key, series);
    }
    return series;
  }

  /** The token and cost series of the model and provider a request is billed at. */
  private usageSeriesFor(model: string, provider: string): UsageSeries {
    const key = `${model}\u0000${provider}`;
    let series = this.usageSeries.get(key);
    if (series === undefined) {
      const labels = { model, provider };
      series = {
        input: this.tokens.series({ model, provider, type: "input" }),
        output: this.tokens.series({ model, provider, type: "output" }),
        cachedInput: this.tokens.series({ model, provider, type: "cached_input" }),
        cacheWriteInput: this.tokens.series({ model, provider, type: "cache_write_input" }),
        reasoning: this.tokens.series({ model, provider, type: "reasoning" }),
        cost: this.cost.series(labels),
      };
      this.usageSeries.set(key, series);
    }
    return series;
  }

  /** The exposition in Prometheus' text format. */
  async render(): Promise<{ contentType: string; body: string }> {
    return { contentType: this.registry.contentType, body: await this.registry.metrics() };
  }

  /** Stops the event-loop monitor. */
  close(): void {
    this.runtime.stop();
  }

  private modelLabel(model: string | undefined): string {
    if (model === undefined) return "";
    return this.catalogModels.has(model) ? model : OTHER;
  }

  private classifyAttempt(outcome: string): "ok" | "cancelled" | "circuit_open" | "error" {
    return outcome === "ok" || outcome === "cancelled" || outcome === "circuit_open" ? outcome : "error";
  }

  private errorCodeLabel(code: string): string {
    return this.errorCodes.has(code) ? code : OTHER;
  }
}

/**
 * A traced request's spans, built after it ended from what it recorded: one SERVER span for the
 * request, one CLIENT span per upstream attempt and one INTERNAL span per server-tool call, its
 * children. Generation spans follow the OpenTelemetry GenAI conventions (operation, provider,
 * request and response model, token usage, finish reasons, error type). Attributes are catalog
 * names, counts and codes: never a key, a header, a prompt or an answer.
 *
 * Loaded only when tracing is on (request-tracer.ts).
 */
import { type Attributes, type HrTime, type SpanContext, SpanKind, SpanStatusCode } from "@opentelemetry/api";
import type { InstrumentationScope } from "@opentelemetry/core";
import type { Resource } from "@opentelemetry/resources";
import type { ReadableSpan } from "@opentelemetry/sdk-trace-base";
import {
  ATTR_ERROR_TYPE,
  ATTR_HTTP_REQUEST_METHOD,
  ATTR_HTTP_RESPONSE_STATUS_CODE,
  ATTR_HTTP_ROUTE,
} from "@opentelemetry/semantic-conventions";
import {
  ATTR_GEN_AI_OPERATION_NAME,
  ATTR_GEN_AI_PROVIDER_NAME,
  ATTR_GEN_AI_REQUEST_MODEL,
  ATTR_GEN_AI_REQUEST_STREAM,
  ATTR_GEN_AI_RESPONSE_FINISH_REASONS,
  ATTR_GEN_AI_RESPONSE_MODEL,
  ATTR_GEN_AI_SYSTEM,
  ATTR_GEN_AI_TOOL_NAME,
  ATTR_GEN_AI_USAGE_CACHE_CREATION_INPUT_TOKENS,
  ATTR_GEN_AI_USAGE_CACHE_READ_INPUT_TOKENS,
  ATTR_GEN_AI_USAGE_INPUT_TOKENS,
  ATTR_GEN_AI_USAGE_OUTPUT_TOKENS,
  ATTR_GEN_AI_USAGE_REASONING_OUTPUT_TOKENS,
  GEN_AI_OPERATION_NAME_VALUE_CHAT,
  GEN_AI_OPERATION_NAME_VALUE_EXECUTE_TOOL,
} from "@opentelemetry/semantic-conventions/incubating";
import type { ExecutedToolCall } from "../engine/admitted-generation.js";
import type { GenerationAttempt, GenerationOutcome } from "../engine/generation-record.js";
import type { ObservedRequest } from "./observed-request.js";
import type { RequestTrace } from "./request-trace.js";
import { createSpanId } from "./trace-context.js";

/** What every span of this process shares. */
export interface SpanOrigin {
  resource: Resource;
  instrumentationScope: InstrumentationScope;
}

/** Text that came from a caller or an upstream is cut to this length in an attribute. */
const MAX_TEXT_ATTRIBUTE = 256;
const SAMPLED = 1;
const NOT_SAMPLED = 0;

export function buildRequestSpans(
  request: ObservedRequest,
  trace: RequestTrace,
  origin: SpanOrigin,
): ReadableSpan[] {
  const settled = request.settledGeneration;
  const flags = trace.sampled ? SAMPLED : NOT_SAMPLED;
  const requestContext: SpanContext = { traceId: trace.traceId, spanId: trace.spanId, traceFlags: flags };
  const parent: SpanContext | undefined =
    trace.parent === undefined
      ? undefined
      : { traceId: trace.traceId, spanId: trace.parent.spanId, traceFlags: flags, isRemote: true };
  const errorType = request.errorCode ?? settled?.outcome.errorCode ?? undefined;
  const attributes: Attributes = {
    [ATTR_HTTP_REQUEST_METHOD]: request.method,
    [ATTR_HTTP_RESPONSE_STATUS_CODE]: request.status,
    "gateway.request_id": request.requestId,
  };
  if (request.route !== undefined) attributes[ATTR_HTTP_ROUTE] = request.route;
  if (errorType !== undefined) attributes[ATTR_ERROR_TYPE] = errorType;
  let name = request.route === undefined ? request.method : `${request.method} ${request.route}`;
  if (request.format !== undefined) {
    // Admitted, the requested model is a catalog slug; before that it is any text the caller sent.
    name = settled === undefined ? GEN_AI_OPERATION_NAME_VALUE_CHAT : `chat ${request.model}`;
    attributes[ATTR_GEN_AI_OPERATION_NAME] = GEN_AI_OPERATION_NAME_VALUE_CHAT;
    attributes["gateway.ingress_format"] = request.format;
    if (request.model !== undefined) attributes[ATTR_GEN_AI_REQUEST_MODEL] = cut(request.model);
    if (request.stream !== undefined) attributes[ATTR_GEN_AI_REQUEST_STREAM] = request.stream;
  }
  if (settled !== undefined) {
    const { outcome, served } = settled;
    attributes["gateway.outcome"] = outcome.status;
    attributes["gateway.cost_micro_usd"] = outcome.costMicroUsd;
    attributes["gateway.attempts"] = outcome.attempts?.length ?? 0;
    if (served !== undefined) {
      attributes[ATTR_GEN_AI_PROVIDER_NAME] = served.provider;
      attributes[ATTR_GEN_AI_SYSTEM] = served.provider;
      attributes["gateway.served_model"] = served.model;
      Object.assign(attributes, describeResponse(outcome));
    }
  }
  const failed = request.status >= 500 || settled?.outcome.status === "error";
  const spans: ReadableSpan[] = [
    createSpan(origin, {
      name,
      kind: SpanKind.SERVER,
      context: requestContext,
      parent,
      startedAt: request.startedAt,
      endedAt: request.endedAt,
      attributes,
      errorMessage: failed ? (errorType ?? `status ${request.status}`) : undefined,
    }),
  ];
  if (settled === undefined) return spans;
  const attempts = settled.outcome.attempts ?? [];
  let previousEnd = request.startedAt;
  for (let index = 0; index < attempts.length; index++) {
    const attempt = attempts[index];
    const startedAt = trace.attemptStartedAt[index] ?? previousEnd;
    // The recorded latency is whole milliseconds (rounded): it must not reach into the next
    // attempt, nor past the request's own end, which can follow the attempt's within the rounding.
    previousEnd = Math.min(
      startedAt + attempt.latencyMs,
      trace.attemptStartedAt[index + 1] ?? Infinity,
      request.endedAt,
    );
    spans.push(
      createSpan(origin, {
        name: `chat ${cut(attempt.upstreamModel)}`,
        kind: SpanKind.CLIENT,
        context: {
          traceId: trace.traceId,
          spanId: trace.attemptSpanIds[index] ?? createSpanId(),
          traceFlags: flags,
        },
        parent: requestContext,
        startedAt,
        endedAt: previousEnd,
        attributes: describeAttempt(attempt, index, attempt === settled.served ? settled.outcome : undefined),
        errorMessage: isFailure(attempt.outcome) ? attempt.outcome : undefined,
      }),
    );
  }
  for (const call of settled.toolCalls) {
    spans.push(
      createSpan(origin, {
        name: `${GEN_AI_OPERATION_NAME_VALUE_EXECUTE_TOOL} ${call.tool}`,
        kind: SpanKind.INTERNAL,
        context: { traceId: trace.traceId, spanId: createSpanId(), traceFlags: flags },
        parent: requestContext,
        startedAt: call.startedAt,
        endedAt: call.startedAt + call.durationMs,
        attributes: describeToolCall(call),
        errorMessage: call.status === "failed" ? (call.errorCode ?? "failed") : undefined,
      }),
    );
  }
  return spans;
}

/** The answer's model, finish reason and token usage (the request span, and the serving attempt's). */
function describeResponse(outcome: GenerationOutcome): Attributes {
  const attributes: Attributes = {
    [ATTR_GEN_AI_USAGE_INPUT_TOKENS]: outcome.tokensPrompt,
    [ATTR_GEN_AI_USAGE_OUTPUT_TOKENS]: outcome.tokensCompletion,
    [ATTR_GEN_AI_USAGE_CACHE_READ_INPUT_TOKENS]: outcome.tokensCachedPrompt,
    [ATTR_GEN_AI_USAGE_CACHE_CREATION_INPUT_TOKENS]: outcome.tokensCacheWrite,
    [ATTR_GEN_AI_USAGE_REASONING_OUTPUT_TOKENS]: outcome.tokensReasoning,
  };
  if (outcome.upstreamModel !== null) attributes[ATTR_GEN_AI_RESPONSE_MODEL] = cut(outcome.upstreamModel);
  if (outcome.finishReason !== null) attributes[ATTR_GEN_AI_RESPONSE_FINISH_REASONS] = [outcome.finishReason];
  return attributes;
}

function describeAttempt(
  attempt: GenerationAttempt,
  index: number,
  servedOutcome: GenerationOutcome | undefined,
): Attributes {
  const attributes: Attributes = {
    [ATTR_GEN_AI_OPERATION_NAME]: GEN_AI_OPERATION_NAME_VALUE_CHAT,
    [ATTR_GEN_AI_PROVIDER_NAME]: attempt.provider,
    [ATTR_GEN_AI_SYSTEM]: attempt.provider,
    [ATTR_GEN_AI_REQUEST_MODEL]: cut(attempt.upstreamModel),
    "gateway.catalog_model": attempt.model,
    "gateway.attempt.index": index,
    "gateway.attempt.outcome": attempt.outcome,
  };
  if (isFailure(attempt.outcome)) attributes[ATTR_ERROR_TYPE] = attempt.outcome;
  if (servedOutcome !== undefined) Object.assign(attributes, describeResponse(servedOutcome));
  return attributes;
}

function describeToolCall(call: ExecutedToolCall): Attributes {
  const attributes: Attributes = {
    [ATTR_GEN_AI_OPERATION_NAME]: GEN_AI_OPERATION_NAME_VALUE_EXECUTE_TOOL,
    [ATTR_GEN_AI_TOOL_NAME]: call.tool,
    "gateway.tool.status": call.status,
    "gateway.cost_micro_usd": call.costMicroUsd,
  };
  if (call.status === "failed") attributes[ATTR_ERROR_TYPE] = call.errorCode ?? "failed";
  return attributes;
}

/** An attempt that failed: not one that served, was left by its client or was skipped (breaker). */
function isFailure(outcome: string): boolean {
  return outcome !== "ok" && outcome !== "cancelled" && outcome !== "circuit_open";
}

interface SpanDescription {
  name: string;
  kind: SpanKind;
  context: SpanContext;
  parent: SpanContext | undefined;
  /** performance.now() times. */
  startedAt: number;
  endedAt: number;
  attributes: Attributes;
  /** Set when the span's operation failed: its status is then ERROR with this message. */
  errorMessage: string | undefined;
}

function createSpan(origin: SpanOrigin, span: SpanDescription): ReadableSpan {
  const endedAt = Math.max(span.startedAt, span.endedAt);
  return {
    name: span.name,
    kind: span.kind,
    spanContext: () => span.context,
    parentSpanContext: span.parent,
    startTime: toHrTime(performance.timeOrigin + span.startedAt),
    endTime: toHrTime(performance.timeOrigin + endedAt),
    duration: toHrTime(endedAt - span.startedAt),
    status:
      span.errorMessage === undefined
        ? { code: SpanStatusCode.UNSET }
        : { code: SpanStatusCode.ERROR, message: span.errorMessage },
    attributes: span.attributes,
    links: [],
    events: [],
    ended: true,
    resource: origin.resource,
    instrumentationScope: origin.instrumentationScope,
    droppedAttributesCount: 0,
    droppedEventsCount: 0,
    droppedLinksCount: 0,
  };
}

/** Milliseconds as OpenTelemetry's [seconds, nanoseconds]. */
function toHrTime(milliseconds: number): HrTime {
  const seconds = Math.floor(milliseconds / 1000);
  const nanoseconds = Math.min(999_999_999, Math.round((milliseconds - seconds * 1000) * 1e6));
  return [seconds, nanoseconds];
}

function cut(text: string): string {
  return text.length <= MAX_TEXT_ATTRIBUTE ? text : text.slice(0, MAX_TEXT_ATTRIBUTE);
}

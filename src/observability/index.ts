/**
 * Metrics and traces of finished requests. The OpenTelemetry modules are not reachable from here
 * except through `loadRequestTracer`'s dynamic import, so importing this folder loads none.
 */
export { GatewayMetrics, type MetricsSources } from "./gateway-metrics.js";
export type { ObservedRequest } from "./observed-request.js";
export { RequestTrace } from "./request-trace.js";
export { loadRequestTracer, type RequestTracer } from "./request-tracer.js";

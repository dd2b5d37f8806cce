import assert from "node:assert/strict";
import { test } from "node:test";
import { formatTraceparent, parseTraceparent, readTracestate } from "./trace-context.js";

const TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736";
const SPAN_ID = "00f067aa0ba902b7";

test("traceparent: a valid header names the caller's trace, span and sampling", () => {
  assert.deepEqual(parseTraceparent(`00-${TRACE_ID}-${SPAN_ID}-01`), {
    traceId: TRACE_ID,
    spanId: SPAN_ID,
    sampled: true,
  });
  assert.equal(parseTraceparent(`00-${TRACE_ID}-${SPAN_ID}-00`)?.sampled, false);
  // Other flag bits do not change sampling; surrounding spaces are tolerated.
  assert.equal(parseTraceparent(` 00-${TRACE_ID}-${SPAN_ID}-03 `)?.sampled, true);
  // A later version may append fields.
  assert.equal(parseTraceparent(`01-${TRACE_ID}-${SPAN_ID}-01-extra`)?.traceId, TRACE_ID);
});

test("traceparent: absent, repeated or malformed headers start a new trace", () => {
  for (const header of [
    undefined,
    [`00-${TRACE_ID}-${SPAN_ID}-01`, `00-${TRACE_ID}-${SPAN_ID}-01`],
    "",
    `00-${TRACE_ID.toUpperCase()}-${SPAN_ID}-01`,
    `00-${TRACE_ID}-${SPAN_ID}-01-extra`,
    `ff-${TRACE_ID}-${SPAN_ID}-01`,
    `00-${"0".repeat(32)}-${SPAN_ID}-01`,
    `00-${TRACE_ID}-${"0".repeat(16)}-01`,
    `00-${TRACE_ID.slice(1)}-${SPAN_ID}-01`,
    `00-${TRACE_ID}-${SPAN_ID}`,
  ]) {
    assert.equal(parseTraceparent(header), undefined, String(header));
  }
});

test("tracestate is passed on only as one header of sane length", () => {
  assert.equal(readTracestate("vendor=abc,other=1"), "vendor=abc,other=1");
  assert.equal(readTracestate(["a=1", "b=2"]), undefined);
  assert.equal(readTracestate(`v=${"x".repeat(600)}`), undefined);
  assert.equal(readTracestate("  "), undefined);
});

test("the upstream traceparent carries the trace, the attempt's span and the sampling flag", () => {
  assert.equal(formatTraceparent(TRACE_ID, SPAN_ID, true), `00-${TRACE_ID}-${SPAN_ID}-01`);
  assert.equal(formatTraceparent(TRACE_ID, SPAN_ID, false), `00-${TRACE_ID}-${SPAN_ID}-00`);
  assert.deepEqual(parseTraceparent(formatTraceparent(TRACE_ID, SPAN_ID, false)), {
    traceId: TRACE_ID,
    spanId: SPAN_ID,
    sampled: false,
  });
});

import assert from "node:assert/strict";
import { availableParallelism } from "node:os";
import { test } from "node:test";
import {
  defaultWebFetchSettings,
  toWebFetchSettings,
  UNSAFE_LOOPBACK_WARNING,
  warnIfWebFetchUnsafe,
  webFetchConfigSchema,
} from "./web-fetch-config.js";

test("an absent block gives the documented safe defaults", () => {
  assert.deepEqual(defaultWebFetchSettings(), {
    enabled: true,
    allowHttp: true,
    allowedPorts: [80, 443],
    maxBytes: 10 * 1024 * 1024,
    timeoutMs: 20_000,
    maxRedirects: 5,
    maxContentTokens: 25_000,
    pricePerCallMicroUsd: 0,
    htmlConversion: {
      workers: Math.min(8, Math.max(2, availableParallelism())),
      timeoutMs: 10_000,
      maxBytes: 2 * 1024 * 1024,
      maxDepth: 128,
      maxElements: 20_000,
      perKeyRunning: Math.min(8, Math.max(2, availableParallelism())) - 1,
      perKeyQueued: 16,
      maxHeapMb: 512,
    },
    unsafeAllowLoopbackForTests: false,
  });
});

test("the HTML conversion pool's size and per-key shares follow the workers unless set", () => {
  const set = (html_conversion: Record<string, unknown>) =>
    toWebFetchSettings(webFetchConfigSchema.parse({ html_conversion })).htmlConversion;
  assert.deepEqual(
    { workers: set({ workers: 6 }).workers, perKeyRunning: set({ workers: 6 }).perKeyRunning },
    { workers: 6, perKeyRunning: 5 },
  );
  assert.equal(set({ workers: 1 }).perKeyRunning, 1);
  assert.equal(set({ workers: 4, per_key_running: 9 }).perKeyRunning, 4);
  for (const bad of [{ workers: 0 }, { timeout_ms: 50 }, { max_depth: 2 }, { max_bytes: 10 }, { speed: 1 }]) {
    assert.equal(
      webFetchConfigSchema.safeParse({ html_conversion: bad }).success,
      false,
      JSON.stringify(bad),
    );
  }
});

test("settings are validated: unknown keys, out-of-range caps and fractional money are refused", () => {
  for (const bad of [
    { allow_loopback: true },
    { allowed_ports: [] },
    { allowed_ports: [0] },
    { allowed_ports: [65_536] },
    { max_redirects: 11 },
    { timeout_ms: 0 },
    { max_bytes: 10 },
    { price_per_call_micro_usd: 1.5 },
    { price_per_call_micro_usd: -1 },
  ]) {
    assert.equal(webFetchConfigSchema.safeParse(bad).success, false, JSON.stringify(bad));
  }
  const parsed = toWebFetchSettings(
    webFetchConfigSchema.parse({
      allowed_ports: [443, 8443, 443],
      allow_http: false,
      price_per_call_micro_usd: 1000,
    }),
  );
  assert.deepEqual(parsed.allowedPorts, [443, 8443]);
  assert.equal(parsed.allowHttp, false);
  assert.equal(parsed.pricePerCallMicroUsd, 1000);
});

test("the loopback escape hatch is warned about loudly, and only when it is on", () => {
  const warnings: Array<[Record<string, unknown>, string]> = [];
  const sink = {
    warn: (fields: Record<string, unknown>, message: string) => void warnings.push([fields, message]),
  };
  assert.equal(warnIfWebFetchUnsafe(defaultWebFetchSettings(), sink), false);
  assert.equal(warnings.length, 0);
  const unsafe = toWebFetchSettings(webFetchConfigSchema.parse({ unsafe_allow_loopback_for_tests: true }));
  assert.equal(warnIfWebFetchUnsafe(unsafe, sink), true);
  assert.deepEqual(warnings, [
    [{ setting: "server_tools.web_fetch.unsafe_allow_loopback_for_tests" }, UNSAFE_LOOPBACK_WARNING],
  ]);
  assert.match(UNSAFE_LOOPBACK_WARNING, /never enable it in production/);
});

/**
 * Keeps `npm run bench` from rotting without running it: each building block of the harness runs
 * briefly in-process — the upstream (all four answer kinds), the load generator in both modes, the
 * bare proxy, the slow-stream scenario, /proc readers, the profile summariser, and the gateway vs
 * baseline comparison of `--compare-dir` (options, ratios, report section). No timing is asserted (timing goals live in the bench itself), only that the pieces work together.
 */
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { computeBaselineComparison, computeFloorRatios, type ResultRow } from "../bench/aggregate.js";
import { type BareProxy, startBareProxy } from "../bench/bare-proxy.js";
import { nodeOptionsFor, REPO_ROOT } from "../bench/gateway-target.js";
import { summarise } from "../bench/latency-stats.js";
import { runLoad } from "../bench/load-generator.js";
import { type BenchOptions, estimateRunMs, parseBenchOptions } from "../bench/options.js";
import { readCpuMicros, readMemory } from "../bench/proc-stats.js";
import { type ReportInput, renderReport } from "../bench/report-markdown.js";
import { ResponseParser } from "../bench/response-parser.js";
import {
  buildProbeRequest,
  buildScenarioRequest,
  SCENARIOS,
  type ScenarioId,
  type TargetEndpoint,
} from "../bench/scenarios.js";
import { runSlowStreams } from "../bench/slow-streams.js";
import { type CpuProfile, summariseCpuProfile } from "../bench/summarise-profile.js";
import { checkTargets } from "../bench/target-checks.js";
import { type BenchUpstream, startBenchUpstream } from "../bench/upstream-server.js";

let upstream: BenchUpstream;
let proxy: BareProxy;

before(async () => {
  upstream = await startBenchUpstream({ streamTokens: 8, slowTokens: 3, slowIntervalMs: 20 });
  proxy = await startBareProxy({ upstreamOrigin: upstream.origin });
});

after(async () => {
  await proxy.close();
  await upstream.close();
});

const direct = (): TargetEndpoint => ({ kind: "direct", host: "127.0.0.1", port: upstream.port });
const validatorOf = (id: ScenarioId) => SCENARIOS.find((scenario) => scenario.id === id)!.validate;

test("the response parser handles Content-Length, chunked bodies split anywhere, and read-until-close", () => {
  const chunked = Buffer.from(
    "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5;ext=1\r\nhello\r\n7\r\n, world\r\n0\r\n\r\n",
  );
  for (let split = 1; split < chunked.length; split += 1) {
    const parser = new ResponseParser(true);
    assert.equal(parser.feed(chunked.subarray(0, split), 1), 0);
    assert.equal(parser.feed(chunked.subarray(split), 2), 0);
    assert.ok(parser.done, `split at ${split}`);
    assert.equal(parser.response.body, "hello, world");
    assert.equal(parser.response.status, 200);
  }
  const sized = new ResponseParser(true);
  sized.feed(Buffer.from("HTTP/1.1 404 Not Found\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}"), 5);
  assert.deepEqual(
    {
      done: sized.done,
      status: sized.response.status,
      body: sized.response.body,
      keepAlive: sized.response.keepAlive,
    },
    { done: true, status: 404, body: "{}", keepAlive: false },
  );
  const untilClose = new ResponseParser();
  untilClose.feed(Buffer.from("HTTP/1.0 200 OK\r\n\r\nabc"), 7);
  assert.equal(untilClose.done, false);
  untilClose.finishOnClose();
  assert.equal(untilClose.response.bodyBytes, 3);
  assert.equal(untilClose.response.firstBodyAt, 7);
  assert.throws(() => new ResponseParser().feed(Buffer.from("SMTP ready\r\n\r\n"), 0), /bad status line/);
});

test("the upstream answers Chat Completions and Messages, JSON and SSE", async () => {
  const call = async (path: string, body: object) => {
    const response = await fetch(`${upstream.origin}${path}`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    return { type: response.headers.get("content-type") ?? "", text: await response.text() };
  };
  const chat = await call("/v1/chat/completions", { model: "bench-fast", messages: [] });
  assert.equal(JSON.parse(chat.text).object, "chat.completion");
  const chatStream = await call("/v1/chat/completions", { model: "bench-fast", messages: [], stream: true });
  assert.match(chatStream.type, /text\/event-stream/);
  assert.equal(validatorOf("chat-sse")(chatStream.text), undefined);
  const message = await call("/v1/messages", { model: "bench-fast", max_tokens: 10, messages: [] });
  assert.equal(JSON.parse(message.text).type, "message");
  const messageStream = await call("/v1/messages", {
    model: "bench-fast",
    max_tokens: 10,
    messages: [],
    stream: true,
  });
  assert.equal(validatorOf("messages-sse")(messageStream.text), undefined);
});

test("the load generator drives every scenario in both modes, directly and through the proxy", async () => {
  const proxyTarget: TargetEndpoint = { kind: "proxy", host: "127.0.0.1", port: proxy.port };
  for (const target of [direct(), proxyTarget]) {
    for (const scenario of SCENARIOS) {
      const result = await runLoad({
        host: target.host,
        port: target.port,
        request: buildScenarioRequest(scenario.id, target),
        mode: { kind: "concurrency", connections: 4 },
        durationMs: 150,
        requestTimeoutMs: 5_000,
        validate: scenario.validate,
      });
      assert.equal(result.errors, 0, `${target.kind} ${scenario.id}: ${JSON.stringify(result.errorKinds)}`);
      assert.ok(result.completed > 0, `${target.kind} ${scenario.id} completed nothing`);
      if (scenario.stream) assert.equal(result.ttfbMs.count, result.completed);
    }
  }
  const paced = await runLoad({
    host: "127.0.0.1",
    port: upstream.port,
    request: buildScenarioRequest("chat-json", direct()),
    mode: { kind: "rate", perSecond: 200 },
    durationMs: 250,
    requestTimeoutMs: 5_000,
  });
  assert.equal(paced.errors, 0);
  assert.equal(paced.completed, 50, "an open loop sends exactly rate × duration requests");
});

test("a wrong answer stops the load generator instead of being measured as speed", async () => {
  await assert.rejects(
    runLoad({
      host: "127.0.0.1",
      port: upstream.port,
      request: buildScenarioRequest("chat-json", direct()),
      mode: { kind: "concurrency", connections: 2 },
      durationMs: 2_000,
      requestTimeoutMs: 5_000,
      validate: () => "not what we expected",
    }),
    /target answered wrongly: not what we expected/,
  );
});

test("the slow-stream scenario completes its waves and reads memory from /proc", async (t) => {
  if (process.platform !== "linux") return t.skip("reads /proc");
  assert.ok((readCpuMicros(process.pid) ?? 0) > 0);
  assert.ok((readMemory(process.pid)?.rssBytes ?? 0) > 0);
  const result = await runSlowStreams({
    target: direct(),
    pid: process.pid,
    request: buildScenarioRequest("chat-sse", direct(), true),
    probeRequest: buildProbeRequest(direct()),
    streams: 20,
    waves: 2,
    streamMs: 60,
    settleMs: 50,
    baselineMs: 100,
    validate: validatorOf("chat-sse"),
  });
  assert.deepEqual(
    result.waves.map((wave) => [wave.completed, wave.errors]),
    [
      [20, 0],
      [20, 0],
    ],
  );
  assert.ok(result.waves.every((wave) => (wave.rssPeakMb ?? 0) > 0));
  assert.notEqual(result.bounded, undefined);
});

test("the profile summariser ranks self time and charges natives to their calling package", () => {
  const frame = (functionName: string, url = "") => ({ functionName, url, lineNumber: 0 });
  const profile: CpuProfile = {
    startTime: 0,
    endTime: 10_000,
    nodes: [
      { id: 1, callFrame: frame("(root)"), children: [2, 3, 5] },
      {
        id: 2,
        callFrame: frame("query", "file:///x/node_modules/@electric-sql/pglite/dist/a.js"),
        children: [4],
      },
      { id: 3, callFrame: frame("(idle)") },
      { id: 4, callFrame: frame("writeBuffer") },
      { id: 5, callFrame: frame("decode", new URL("../src/ingress/x.ts", import.meta.url).href) },
    ],
    // Each sample's time is the gap to the next one.
    samples: [4, 4, 5, 3, 2],
    timeDeltas: [0, 1_000, 1_000, 1_000, 6_000, 0],
  };
  const summary = summariseCpuProfile(profile);
  assert.equal(summary.idleMs, 6);
  assert.equal(summary.busyMs, 3);
  assert.deepEqual(
    summary.top.map((entry) => [entry.name, entry.selfMs, entry.category]),
    [
      ["writeBuffer", 2, "(native)"],
      ["decode", 1, "src/ingress"],
      ["query", 0, "@electric-sql/pglite"],
    ],
  );
  assert.equal(summary.top[0].mainCaller, "query (@electric-sql/pglite)");
  assert.deepEqual(
    summary.owners.map((entry) => [entry.category, entry.selfMs]),
    [
      ["@electric-sql/pglite", 2],
      ["src/ingress", 1],
    ],
  );
  // The gateway's start is left out by time: the two writeBuffer samples come in its first 1.5 ms.
  const afterStart = summariseCpuProfile(profile, 25, 1.5);
  assert.equal(afterStart.busyMs, 1);
  assert.equal(afterStart.idleMs, 6);
  assert.deepEqual(
    afterStart.top.map((entry) => [entry.name, entry.selfMs]),
    [
      ["decode", 1],
      ["query", 0],
    ],
  );
});

test("--warm-start sets the unmeasured load per target before round 1, and the estimate counts it", () => {
  const parse = (argv: string[]) => parseBenchOptions(argv) as BenchOptions;
  assert.equal(parse([]).warmStartMs, 12_000);
  assert.equal(parse(["--quick"]).warmStartMs, 4_000);
  const none = parse(["--warm-start", "0"]);
  const long = parse(["--warm-start", "30"]);
  assert.equal(none.warmStartMs, 0);
  // Three targets (direct, proxy, gateway), each warmed 30 s.
  assert.ok(estimateRunMs(long) - estimateRunMs(none) >= 3 * 30_000);
  assert.ok(long.watchdogMs >= 2 * estimateRunMs(long));
  assert.throws(
    () => parseBenchOptions(["--warm-start", "61"]),
    /--warm-start must be an integer from 0 to 60/,
  );
});

test("--rates none measures only the fixed-concurrency load; a rate out of range is refused", () => {
  const parse = (argv: string[]) => parseBenchOptions(argv) as BenchOptions;
  assert.deepEqual(parse([]).rates, [400]);
  assert.deepEqual(parse(["--rates", "none"]).rates, []);
  assert.deepEqual(parse(["--rates", "200,800"]).rates, [200, 800]);
  assert.ok(estimateRunMs(parse(["--rates", "none"])) < estimateRunMs(parse([])));
  assert.throws(() => parseBenchOptions(["--rates", "0"]), /bad rate "0"/);
});

test("one invocation measures both storage modes unless one is named; each mode has its own targets", () => {
  const parse = (argv: string[]) => parseBenchOptions(argv) as BenchOptions;
  assert.deepEqual(parse([]).modes, ["embedded", "distributed"]);
  assert.deepEqual(parse(["--embedded"]).modes, ["embedded"]);
  assert.deepEqual(parse(["--distributed"]).modes, ["distributed"]);
  assert.deepEqual(parse(["--embedded", "--distributed"]).modes, ["embedded", "distributed"]);
  assert.ok(parse([]).watchdogMs > parse(["--embedded"]).watchdogMs);

  const mode = "32 conc";
  const row = (target: ResultRow["target"], scenario: ScenarioId, load: string, extra: Partial<ResultRow>) =>
    ({
      scenario,
      mode: load,
      target,
      rounds: 1,
      completed: 1,
      errors: 0,
      errorKinds: {},
      dropped: 0,
      requestsPerSecond: 400,
      requestsPerSecondByRound: [400],
      ...extra,
    }) as ResultRow;
  const latency = (p99: number) => ({ p50: 1, p90: 1, p99, max: p99, mean: 1, count: 1 });
  const rows = [
    row("proxy", "chat-json", mode, { latencyMs: latency(2) }),
    row("gateway", "chat-json", mode, { latencyMs: latency(10), peakRssMb: 200 }),
    row("gateway", "chat-json", "400 rps", { addedP50Ms: 0.5, addedP99Ms: 12 }),
  ];
  const ratios = [{ scenario: "chat-json" as ScenarioId, mode, throughput: 0.4, cpuPerRequest: 2 }];
  const byGoal = (checks: ReturnType<typeof checkTargets>) =>
    Object.fromEntries(checks.map((check) => [check.goal, check.met]));
  const distributed = byGoal(checkTargets(rows, ratios, [], mode, "distributed"));
  assert.equal(distributed["≥ 0.35× the floor's req/s, non-streamed chat"], true);
  assert.equal(distributed["added p50 ≤ 0.6 ms at 400 req/s (non-streamed)"], true);
  assert.equal(distributed["added p99 ≤ 10 ms at 400 req/s (non-streamed)"], false);
  assert.equal(distributed["peak RSS ≤ 180 MB (load runs)"], false);
  assert.equal(distributed[`p99 ≤ 4× the floor's (${mode}, worst scenario)`], false);
  const embedded = byGoal(checkTargets(rows, ratios, [], mode, "embedded"));
  assert.equal(embedded["≥ 0.5× the floor's req/s, non-streamed chat"], false);
  assert.equal(embedded["CPU per request ≤ 2.5× the floor's (non-streamed)"], true);
  assert.equal(embedded["peak RSS ≤ 250 MB (load runs)"], true);
});

test("gateway children take BENCH_GATEWAY_NODE_OPTIONS; the baseline its own flags when set, even empty", (t) => {
  const saved = {
    gateway: process.env.BENCH_GATEWAY_NODE_OPTIONS,
    baseline: process.env.BENCH_BASELINE_NODE_OPTIONS,
  };
  t.after(() => {
    for (const [name, value] of [
      ["BENCH_GATEWAY_NODE_OPTIONS", saved.gateway],
      ["BENCH_BASELINE_NODE_OPTIONS", saved.baseline],
    ] as const) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
  });
  process.env.BENCH_GATEWAY_NODE_OPTIONS = "--max-semi-space-size=32";
  delete process.env.BENCH_BASELINE_NODE_OPTIONS;
  assert.deepEqual(nodeOptionsFor("gateway"), { NODE_OPTIONS: "--max-semi-space-size=32" });
  assert.deepEqual(nodeOptionsFor("baseline"), { NODE_OPTIONS: "--max-semi-space-size=32" });
  process.env.BENCH_BASELINE_NODE_OPTIONS = "";
  assert.deepEqual(nodeOptionsFor("gateway"), { NODE_OPTIONS: "--max-semi-space-size=32" });
  assert.deepEqual(nodeOptionsFor("baseline"), {}, "an empty value runs the baseline without flags");
  process.env.BENCH_BASELINE_NODE_OPTIONS = "--max-semi-space-size=8";
  assert.deepEqual(nodeOptionsFor("baseline"), { NODE_OPTIONS: "--max-semi-space-size=8" });
});

test("--compare-dir adds the baseline target, its slow streams and its time to the estimate", () => {
  const parse = (argv: string[]) => parseBenchOptions(argv) as BenchOptions;
  const plain = parse(["--quick"]);
  const compared = parse(["--quick", "--compare-dir", REPO_ROOT]);
  assert.equal(plain.compareDir, undefined);
  assert.equal(compared.compareDir, REPO_ROOT.replace(/\/$/, ""));
  assert.deepEqual(plain.streamTargets, ["gateway"]);
  assert.deepEqual(compared.streamTargets, ["gateway", "baseline"]);
  assert.deepEqual(parse(["--compare-dir", REPO_ROOT]).streamTargets, ["proxy", "gateway", "baseline"]);
  assert.ok(estimateRunMs(compared) > estimateRunMs(plain));
  assert.ok(compared.watchdogMs >= 2 * estimateRunMs(compared));
  assert.throws(
    () => parseBenchOptions(["--compare-dir", "/nonexistent"]),
    /--compare-dir: no src\/main\.ts/,
  );
  assert.match((parseBenchOptions(["--help"]) as { help: string }).help, /--compare-dir DIR/);
  // The baseline speaks the gateway's API, with its own key.
  const request = buildScenarioRequest("chat-json", {
    kind: "baseline",
    host: "127.0.0.1",
    port: 1,
    apiKey: "hi-baseline-key",
  }).toString();
  assert.match(request, /^POST \/api\/v1\/chat\/completions /);
  assert.match(request, /Bearer hi-baseline-key/);
});

test("the gateway is compared with the baseline per scenario and load, and the report shows it", () => {
  const row = (
    target: ResultRow["target"],
    scenario: ResultRow["scenario"],
    perRound: number[],
    cpu: number,
    latency: number[],
    ttfb?: number[],
  ): ResultRow => ({
    scenario,
    mode: "32 conc",
    target,
    rounds: perRound.length,
    completed: 1_000,
    errors: 0,
    errorKinds: {},
    dropped: 0,
    requestsPerSecond: perRound.reduce((sum, value) => sum + value, 0) / perRound.length,
    requestsPerSecondByRound: perRound,
    latencyMs: summarise(latency),
    ttfbMs: ttfb && summarise(ttfb),
    cpuMicrosPerRequest: cpu,
  });
  const rows = [
    row("proxy", "chat-json", [1_000, 1_000], 100, [1, 1, 1]),
    row("gateway", "chat-json", [450, 550], 300, [4, 5, 6]),
    row("baseline", "chat-json", [500, 500], 250, [3, 4, 5]),
    row("gateway", "chat-sse", [300, 300], 400, [8, 8, 8], [2, 2, 2]),
    row("baseline", "chat-sse", [400, 200], 500, [9, 9, 9], [1.5, 1.5, 1.5]),
    // No baseline row for this one (e.g. its measurement failed): no comparison row either.
    row("gateway", "messages-sse", [100], 900, [10], [3]),
  ];
  const comparison = computeBaselineComparison(rows);
  assert.deepEqual(
    comparison.map((item) => [
      item.scenario,
      item.throughput,
      item.throughputByRound,
      item.cpuPerRequest,
      item.p50DeltaMs,
      item.ttfbP50DeltaMs,
    ]),
    [
      ["chat-json", 1, [0.9, 1.1], 1.2, 1, undefined],
      ["chat-sse", 1, [0.75, 1.5], 0.8, -1, 0.5],
    ],
  );
  assert.deepEqual(computeBaselineComparison(rows.filter((item) => item.target !== "baseline")), []);
  // The floor ratios stay about the gateway only.
  assert.deepEqual(
    computeFloorRatios(rows).map((ratio) => ratio.scenario),
    ["chat-json"],
  );

  const input: ReportInput = {
    environment: {
      startedAt: "2026-01-01T00:00:00.000Z",
      node: "v20",
      cpuModel: "test CPU",
      cpuCount: 2,
      pinning: "not pinned",
      storage: "embedded",
      gatewayDir: "this checkout",
      baselineDir: "/tmp/gw-base",
      options: "--compare-dir /tmp/gw-base",
      profiled: false,
      quick: false,
      durationS: 1,
    },
    rows,
    ratios: computeFloorRatios(rows),
    comparison,
    checks: [],
    streams: [],
    failures: [],
    gatewayErrorLines: [],
    gatewayErrorCount: 0,
  };
  const markdown = renderReport(input);
  assert.match(markdown, /## Gateway vs baseline \(same run\)/);
  assert.match(markdown, /\| chat-json \| 32 conc \| 1\.000 \| 0\.90, 1\.10 \| 1\.200 \| \+1\.00 \| – \|/);
  assert.match(
    markdown,
    /\| chat-sse \| 32 conc \| 1\.000 \| 0\.75, 1\.50 \| 0\.800 \| -1\.00 \| \+0\.50 \|/,
  );
  assert.match(markdown, /\| chat-json \| 32 conc \| baseline \|/);
  assert.match(markdown, /baseline \(--compare-dir\): \/tmp\/gw-base/);
  assert.doesNotMatch(renderReport({ ...input, comparison: [] }), /Gateway vs baseline/);
  // A --quick report says its figures are not for quoting; a default one does not.
  assert.doesNotMatch(markdown, /--quick`: /);
  assert.match(
    renderReport({ ...input, environment: { ...input.environment, quick: true } }),
    /⚠ `--quick`: .*a smoke check/,
  );
});

import assert from "node:assert/strict";
import { PassThrough } from "node:stream";
import { test } from "node:test";
import { startEventLoopWatchdog } from "./event-loop-watchdog.js";
import { createLogger } from "./logger.js";

function captureLogs() {
  const lines: Array<Record<string, unknown>> = [];
  const sink = new PassThrough();
  sink.on("data", (chunk: Buffer) => {
    for (const line of chunk.toString("utf8").split("\n")) if (line) lines.push(JSON.parse(line));
  });
  return { lines, logger: createLogger("info", sink) };
}

function blockFor(milliseconds: number): void {
  const until = performance.now() + milliseconds;
  while (performance.now() < until) {
    // Holds the event loop, as a runaway request would.
  }
}

const pause = (milliseconds: number) => new Promise((resolve) => setTimeout(resolve, milliseconds));

test("a stall over the threshold is logged with its length; a short one is not", async () => {
  const { lines, logger } = captureLogs();
  const watchdog = startEventLoopWatchdog(logger, 300);
  try {
    await pause(120);
    blockFor(40);
    await pause(120);
    assert.equal(lines.length, 0, "40 ms stays under a 300 ms threshold");
    blockFor(700);
    await pause(200);
    const stalls = lines.filter((line) => line.msg === "event loop stalled");
    assert.equal(stalls.length, 1, JSON.stringify(lines));
    const stalledMs = stalls[0].stalledMs as number;
    assert.ok(stalledMs >= 550 && stalledMs <= 2_000, `stalledMs ${stalledMs}`);
    assert.equal(stalls[0].thresholdMs, 300);
  } finally {
    watchdog.stop();
  }
});

test("threshold 0 turns the watchdog off", async () => {
  const { lines, logger } = captureLogs();
  const watchdog = startEventLoopWatchdog(logger, 0);
  blockFor(200);
  await pause(50);
  watchdog.stop();
  assert.equal(lines.length, 0);
});

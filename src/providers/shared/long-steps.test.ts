import assert from "node:assert/strict";
import { createServer, request } from "node:http";
import type { AddressInfo } from "node:net";
import { test } from "node:test";
import { startLongStep } from "./long-steps.js";

const STEPS = 10;

function busy(milliseconds: number): void {
  const end = performance.now() + milliseconds;
  while (performance.now() < end);
}

test("steps that ask together, before the first has run, each run in a turn of their own with I/O between them", async () => {
  // A real socket: an answer that arrives while the steps wait must be read between two of them.
  const server = createServer((_request, response) => response.end("pong"));
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  const order: string[] = [];
  try {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    const steps = Array.from({ length: STEPS }, (_, index) =>
      (async () => {
        await gate;
        await startLongStep();
        order.push(`step ${index}`);
        busy(10);
      })(),
    );
    release();
    // Sent as the steps start: the server (in this process too) reads it and answers, and the
    // answer is read, only in turns between steps.
    const answered = new Promise<void>((resolve, reject) => {
      const outgoing = request({ port, host: "127.0.0.1", path: "/" }, (response) => {
        response.resume();
        response.on("end", () => {
          order.push("answer read");
          resolve();
        });
      });
      outgoing.on("error", reject);
      outgoing.end();
    });
    await Promise.all([...steps, answered]);
    // With every step in the turn that asked, the answer is read after the last one.
    assert.notEqual(order.indexOf("answer read"), order.length - 1, order.join(", "));
    assert.deepEqual(
      order.filter((entry) => entry.startsWith("step")),
      Array.from({ length: STEPS }, (_, index) => `step ${index}`),
    );
  } finally {
    server.close();
  }
});

test("a step alone in a fresh turn runs at once", async () => {
  // A turn of its own: the test runner's may have run long already.
  await new Promise((resolve) => setTimeout(resolve, 20));
  let immediateRan = false;
  setImmediate(() => {
    immediateRan = true;
  });
  await startLongStep();
  assert.equal(immediateRan, false);
});

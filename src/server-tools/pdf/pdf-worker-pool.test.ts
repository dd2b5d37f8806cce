import assert from "node:assert/strict";
import { after, test } from "node:test";
import { buildHeavyTestPdf, buildTestPdf, buildTextPages } from "../../../test/helpers/build-test-pdf.js";
import { createPdfWorkerPool } from "./pdf-worker-pool.js";

const pool = createPdfWorkerPool({ maxWorkers: 1, workerMemoryMb: 256, idleMs: 60_000 });
after(() => pool.close());

const caps = { maxPages: 10, maxTextBytes: 100_000 };

test("with every thread busy, jobs wait in order, and a queued job's deadline counts its wait", async () => {
  assert.equal(await pool.prewarm(), true);
  const heavy = buildHeavyTestPdf();
  const running = pool.run({ bytes: heavy, ...caps }, { timeoutMs: 60_000 });
  const started = performance.now();
  const queued = await pool.run({ bytes: buildTestPdf(buildTextPages(1)), ...caps }, { timeoutMs: 300 });
  assert.deepEqual(queued, { ok: false, reason: "timeout", detail: "not done within 300 ms" });
  assert.ok(performance.now() - started < 1000);
  assert.equal(pool.threadCount, 1, "the busy thread is not stopped for a job that never reached it");
  const first = await running;
  assert.ok(first.ok);

  const both = await Promise.all([
    pool.run({ bytes: buildTestPdf(buildTextPages(2)), ...caps }, { timeoutMs: 30_000 }),
    pool.run({ bytes: buildTestPdf(buildTextPages(3)), ...caps }, { timeoutMs: 30_000 }),
  ]);
  assert.deepEqual(
    both.map((outcome) => outcome.ok && outcome.pages.length),
    [2, 3],
  );
  assert.equal(pool.threadCount, 1);
});

test("after close, jobs end as internal instead of waiting", async () => {
  const closing = createPdfWorkerPool({ maxWorkers: 1, workerMemoryMb: 256, idleMs: 60_000 });
  const pending = closing.run({ bytes: buildTestPdf(buildTextPages(1)), ...caps }, { timeoutMs: 30_000 });
  await closing.close();
  assert.deepEqual(await pending, { ok: false, reason: "internal", detail: "the PDF reader was closed" });
  assert.equal(
    (await closing.run({ bytes: buildTestPdf(buildTextPages(1)), ...caps }, { timeoutMs: 1000 })).ok,
    false,
  );
  assert.equal(closing.threadCount, 0);
});

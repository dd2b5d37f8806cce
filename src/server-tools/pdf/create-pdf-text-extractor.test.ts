import assert from "node:assert/strict";
import { after, describe, test } from "node:test";
import { buildHeavyTestPdf, buildTestPdf, buildTextPages } from "../../../test/helpers/build-test-pdf.js";
import { pdfToolConfigSchema, resolvePdfToolSettings } from "../../config/server-tools/pdf-config.js";
import { createPdfTextExtractor, type PdfTextExtractor } from "./create-pdf-text-extractor.js";
import type { PdfExtraction } from "./pdf-extraction.js";
import { createPdfWorkerPool } from "./pdf-worker-pool.js";

// Caps, prices and deadlines are per job, so extractors of different settings share one pool
// (one thread start-up for the file); tests that stop threads get their own.
const sharedPool = createPdfWorkerPool({ maxWorkers: 2, workerMemoryMb: 512, idleMs: 60_000 });
const ownPools: PdfTextExtractor[] = [];
after(async () => {
  await sharedPool.close();
  await Promise.all(ownPools.map((extractor) => extractor.close()));
});

function createExtractor(file: Record<string, unknown> = {}, options: { ownPool?: boolean } = {}) {
  const settings = resolvePdfToolSettings(pdfToolConfigSchema.parse(file));
  if (!options.ownPool) return createPdfTextExtractor(settings, { pool: sharedPool });
  const extractor = createPdfTextExtractor(settings);
  ownPools.push(extractor);
  return extractor;
}

function expectText(result: PdfExtraction): Extract<PdfExtraction, { ok: true }> {
  assert.ok(result.ok, `expected text, got ${JSON.stringify(!result.ok && result.failure)}`);
  return result;
}

function expectFailure(result: PdfExtraction, reason: string): string {
  assert.ok(!result.ok, "expected a failure");
  assert.equal(result.failure.reason, reason, result.failure.message);
  return result.failure.message;
}

// Shared by the tests that use the defaults except the price and the page cap.
const standard = createExtractor({ max_pages: 5, price_per_page_usd: "0.001" });
// Threads of its own, since its tests stop them.
const stoppable = createExtractor({ timeout_ms: 400 }, { ownPool: true });

describe("pdf text extraction", () => {
  test("a text-layer PDF becomes the file wrapper with one marker per page, in order", async () => {
    const result = expectText(
      await standard.extractText({ bytes: buildTestPdf(buildTextPages(3, 2)), filename: "report.pdf" }),
    );
    assert.equal(
      result.text,
      [
        '<file name="report.pdf" pages="3">',
        "--- page 1 ---",
        "page 1 line 1 lorem ipsum",
        "page 1 line 2 lorem ipsum",
        "",
        "--- page 2 ---",
        "page 2 line 1 lorem ipsum",
        "page 2 line 2 lorem ipsum",
        "",
        "--- page 3 ---",
        "page 3 line 1 lorem ipsum",
        "page 3 line 2 lorem ipsum",
        "</file>",
      ].join("\n"),
    );
    assert.equal(result.totalPages, 3);
    assert.equal(result.pagesIncluded, 3);
    assert.equal(result.pagesCut, false);
    assert.equal(result.textCut, false);
    assert.equal(result.costMicroUsd, 3 * 1000);
    assert.match(result.sha256, /^[0-9a-f]{64}$/);
  });

  test("pages past the page cap are neither read nor charged, and the text says so", async () => {
    const result = expectText(
      await standard.extractText({ bytes: buildTestPdf(buildTextPages(12, 1)), filename: "long.pdf" }),
    );
    assert.equal(result.totalPages, 12);
    assert.equal(result.pagesIncluded, 5);
    assert.equal(result.pagesCut, true);
    assert.equal(result.costMicroUsd, 5 * 1000);
    assert.match(result.text, /--- page 5 ---\npage 5 line 1/);
    assert.doesNotMatch(result.text, /--- page 6 ---|page 6 line/);
    assert.match(result.text, /\[pages 6-12 not included: at most 5 pages are read\]\n<\/file>$/);
  });

  test("a request may lower the page cap but not raise it", async () => {
    const bytes = buildTestPdf(buildTextPages(8, 1));
    const lowered = expectText(await standard.extractText({ bytes }, { maxPages: 2 }));
    assert.equal(lowered.pagesIncluded, 2);
    assert.match(lowered.text, /\[pages 3-8 not included: at most 2 pages are read\]/);
    const raised = expectText(await standard.extractText({ bytes }, { maxPages: 50 }));
    assert.equal(raised.pagesIncluded, 5);
  });

  test("the text cap cuts the text at a character boundary and stops reading pages", async () => {
    const extractor = createExtractor({ max_text_bytes: 2048 });
    const pages = buildTextPages(20, 20, "ünïcödé text that fills the page");
    const result = expectText(
      await extractor.extractText({ bytes: buildTestPdf(pages), filename: "big.pdf" }),
    );
    assert.equal(result.textCut, true);
    assert.ok(result.pagesIncluded < 20);
    const body = result.text.replace(/^<file[^\n]*\n/, "").replace(/\n\[text cut here[^\n]*\n<\/file>$/, "");
    const pageTexts = body.split(/\n*--- page \d+ ---\n/).filter((text) => text !== "");
    assert.equal(pageTexts.length, result.pagesIncluded);
    const kept = pageTexts.reduce((sum, text) => sum + Buffer.byteLength(text), 0);
    assert.ok(kept <= 2048 && kept > 1900, `kept ${kept} bytes`);
    assert.doesNotMatch(result.text, /\uFFFD/, "no character split in half");
    assert.match(
      result.text,
      new RegExp(
        `\\[text cut here: at most 2048 bytes of text are read; pages ${result.pagesIncluded + 1}-20 not included\\]`,
      ),
    );
  });

  test("a file over the byte cap is refused before any parsing", async () => {
    const extractor = createExtractor({ max_file_bytes: 4096 });
    const bytes = buildTestPdf(buildTextPages(2), { paddingBytes: 8000 });
    const message = expectFailure(await extractor.extractText({ bytes, filename: "huge.pdf" }), "too_large");
    assert.match(message, /"huge\.pdf" is 10 KiB; PDFs are accepted up to 4 KiB/);
    assert.equal(extractor.stats().parses, 0);
  });

  test("an image-only (scanned) PDF fails as no_text_layer", async () => {
    const bytes = buildTestPdf([{ image: true }, { image: true }]);
    const message = expectFailure(
      await standard.extractText({ bytes, filename: "scan.pdf" }),
      "no_text_layer",
    );
    assert.match(message, /"scan\.pdf" has no text layer in the 2 pages read/);
  });

  test("a page without text inside a text PDF is marked, not dropped", async () => {
    const bytes = buildTestPdf([{ lines: ["cover"] }, { image: true }, { lines: ["end"] }]);
    const result = expectText(await standard.extractText({ bytes }));
    assert.match(result.text, /--- page 2 ---\n\[no text on this page\]\n\n--- page 3 ---\nend/);
    assert.match(result.text, /^<file name="document\.pdf" pages="3">/);
  });

  test("a PDF that needs a password fails as encrypted; one with an empty user password is read", async () => {
    const locked = buildTestPdf(buildTextPages(2), {
      encrypt: { userPassword: "secret", ownerPassword: "owner" },
    });
    const message = expectFailure(
      await standard.extractText({ bytes: locked, filename: "locked.pdf" }),
      "encrypted",
    );
    assert.match(message, /"locked\.pdf" is encrypted and needs a password/);

    const openable = buildTestPdf(buildTextPages(2), {
      encrypt: { userPassword: "", ownerPassword: "owner" },
    });
    const result = expectText(await standard.extractText({ bytes: openable }));
    assert.match(result.text, /page 2 line 3 lorem ipsum/);
  });

  test("bytes that are not a PDF fail as not_pdf without a parse", async () => {
    const extractor = createExtractor();
    const bytes = Buffer.from("<html><body>not a pdf</body></html>");
    const message = expectFailure(await extractor.extractText({ bytes, filename: "page.pdf" }), "not_pdf");
    assert.match(message, /"page\.pdf" is not a PDF/);
    assert.equal(extractor.stats().parses, 0);
  });

  test("garbage after a PDF header and a truncated PDF fail as malformed", async () => {
    const garbage = Buffer.concat([Buffer.from("%PDF-1.7\n"), Buffer.alloc(4000, 0x41)]);
    expectFailure(await standard.extractText({ bytes: garbage }), "malformed");
    const whole = buildTestPdf(buildTextPages(6));
    const truncated = whole.subarray(0, Math.floor(whole.length / 2));
    const message = expectFailure(
      await standard.extractText({ bytes: truncated, filename: "cut.pdf" }),
      "malformed",
    );
    assert.match(message, /"cut\.pdf" could not be read as a PDF/);
  });

  test("the same bytes are parsed once: later calls, concurrent ones and failures come from the cache", async () => {
    const extractor = createExtractor();
    const bytes = buildTestPdf(buildTextPages(3));
    const first = expectText(await extractor.extractText({ bytes, filename: "a.pdf" }));
    assert.equal(first.cached, false);
    assert.equal(extractor.stats().parses, 1);

    // The next turn sends the same PDF (a new buffer, another name): no parse.
    const again = expectText(await extractor.extractText({ bytes: Buffer.from(bytes), filename: "b.pdf" }));
    assert.equal(again.cached, true);
    assert.match(again.text, /^<file name="b\.pdf" pages="3">/);
    assert.equal(again.text.replace("b.pdf", "a.pdf"), first.text);
    assert.equal(extractor.stats().parses, 1);
    assert.equal(extractor.stats().cacheHits, 1);

    const other = buildTestPdf(buildTextPages(4));
    const both = await Promise.all([
      extractor.extractText({ bytes: other }),
      extractor.extractText({ bytes: Buffer.from(other) }),
    ]);
    assert.ok(both.every((result) => result.ok));
    assert.equal(extractor.stats().parses, 2);

    const locked = buildTestPdf(buildTextPages(1), { encrypt: { userPassword: "pw", ownerPassword: "o" } });
    expectFailure(await extractor.extractText({ bytes: locked }), "encrypted");
    expectFailure(await extractor.extractText({ bytes: locked }), "encrypted");
    assert.equal(extractor.stats().parses, 3);
  });

  test("the cache keeps at most its byte budget, dropping the least recently used", async () => {
    const extractor = createExtractor({ cache_max_bytes: 2500 });
    const pdfs = [1, 2, 3].map((index) => buildTestPdf(buildTextPages(3, 10, `document ${index}`)));
    for (const bytes of pdfs) expectText(await extractor.extractText({ bytes }));
    const stats = extractor.stats();
    assert.ok(stats.cacheBytes <= 2500, `cache holds ${stats.cacheBytes} bytes`);
    assert.equal(stats.cacheEntries, 2);
    // The newest is still cached, the oldest is parsed again.
    expectText(await extractor.extractText({ bytes: pdfs[2] }));
    assert.equal(extractor.stats().parses, 3);
    expectText(await extractor.extractText({ bytes: pdfs[0] }));
    assert.equal(extractor.stats().parses, 4);
  });

  test("a heavy PDF is read off the event loop: timers keep firing while it is parsed", async () => {
    const bytes = buildHeavyTestPdf();
    // Warm the worker so its start-up is not part of the measured window.
    expectText(await standard.extractText({ bytes: buildTestPdf(buildTextPages(1)) }));
    let last = performance.now();
    let longestPause = 0;
    const timer = setInterval(() => {
      const now = performance.now();
      longestPause = Math.max(longestPause, now - last);
      last = now;
    }, 5);
    const started = performance.now();
    const result = await standard.extractText({ bytes, filename: "heavy.pdf" });
    const elapsed = performance.now() - started;
    clearInterval(timer);
    // If no timer ran at all, the pause is the whole wait.
    longestPause = Math.max(longestPause, performance.now() - last);
    expectText(result);
    // Parsed on this thread, this one page holds the loop for its whole parse (over a second).
    assert.ok(
      longestPause < 400,
      `the event loop paused ${longestPause.toFixed(0)} ms (parse took ${elapsed.toFixed(0)} ms)`,
    );
    // PDF.js never ran on this thread (unpdf installs a DOMMatrix polyfill where it loads).
    assert.equal((globalThis as { DOMMatrix?: unknown }).DOMMatrix, undefined);
  });

  test("a caller that joined another's parse stops waiting at its own abort; the parse goes on", async () => {
    const extractor = createExtractor();
    const bytes = buildHeavyTestPdf();
    const first = extractor.extractText({ bytes });
    const controller = new AbortController();
    const second = extractor.extractText({ bytes }, { signal: controller.signal });
    setTimeout(() => controller.abort(), 50);
    const started = performance.now();
    expectFailure(await second, "aborted");
    assert.ok(performance.now() - started < 1000);
    expectText(await first);
    assert.equal(extractor.stats().parses, 1);
  });

  test("past its deadline an extraction is stopped, and the next one still works", async () => {
    const extractor = stoppable;
    // A warm thread, so the deadline falls while PDF.js is inside the page, not during start-up.
    assert.equal(await extractor.prewarm(), true);
    const started = performance.now();
    const message = expectFailure(
      await extractor.extractText({ bytes: buildHeavyTestPdf(), filename: "slow.pdf" }),
      "timeout",
    );
    assert.ok(performance.now() - started < 1500, "the failure comes at the deadline, not after the parse");
    assert.match(message, /Reading "slow\.pdf" took longer than 400 ms and was stopped/);
    assert.equal(extractor.stats().threads, 0, "the stuck worker was terminated");

    assert.equal(await extractor.prewarm(), true);
    expectText(await extractor.extractText({ bytes: buildTestPdf(buildTextPages(2)) }));
  });

  test("an aborted extraction ends at once as aborted, and its thread is stopped", async () => {
    const extractor = stoppable;
    assert.equal(await extractor.prewarm(), true);
    const controller = new AbortController();
    const pending = extractor.extractText({ bytes: buildHeavyTestPdf() }, { signal: controller.signal });
    setTimeout(() => controller.abort(), 50);
    const started = performance.now();
    expectFailure(await pending, "aborted");
    assert.ok(performance.now() - started < 1000, "ends at the abort");
    assert.equal(extractor.stats().threads, 0);
  });

  test("the worst-case cost for a reservation uses the page estimate, capped by the page cap", () => {
    assert.equal(standard.estimateMaxCostMicroUsd(buildTestPdf(buildTextPages(3))), 3 * 1000);
    assert.equal(standard.estimateMaxCostMicroUsd(buildTestPdf(buildTextPages(9))), 5 * 1000);
    assert.equal(standard.estimateMaxCostMicroUsd(), 5 * 1000);
    assert.equal(standard.estimateMaxCostMicroUsd(undefined, { maxPages: 2 }), 2 * 1000);
  });
});

import assert from "node:assert/strict";
import { after, test } from "node:test";
import { createHtmlConverter } from "./html-conversion-pool.js";

const converter = createHtmlConverter();
after(() => converter.close());

const small = Buffer.from("<html><head><title>Small</title></head><body><p>tiny page</p></body></html>");
// About 8 MB of paragraphs: seconds of parsing and Readability.
const huge = Buffer.from(
  `<html><body><article>${"<p>Paragraph with <a href='/x'>a link</a> and <b>bold</b> words in it.</p>".repeat(110_000)}</article></body></html>`,
);

test("a conversion past its deadline is ended by terminating its worker, and the next one runs", async () => {
  const warm = await converter.convert(small, null, "http://example.com/", 20_000);
  assert.deepEqual(warm, { ok: true, title: "Small", markdown: "tiny page", readable: true });

  const started = performance.now();
  const slow = await converter.convert(huge, null, "http://example.com/", 300);
  const took = performance.now() - started;
  assert.deepEqual(slow, { ok: false, reason: "timeout", message: "converting the page took too long" });
  assert.ok(took < 2000, `gave up after ${took} ms`);

  // Jobs queue behind a busy worker; their wait counts against their own deadline.
  const [again, queued] = await Promise.all([
    converter.convert(small, null, "http://example.com/", 20_000),
    converter.convert(small, "utf-8", "http://example.com/", 20_000),
  ]);
  assert.equal(again.ok && again.markdown, "tiny page");
  assert.equal(queued.ok && queued.markdown, "tiny page");
});

test("a closed converter ends its jobs instead of leaving them waiting", async () => {
  const own = createHtmlConverter();
  const pending = own.convert(huge, null, "http://example.com/", 20_000);
  await own.close();
  assert.deepEqual(await pending, { ok: false, reason: "failed", message: "converter closed" });
  assert.equal((await own.convert(small, null, "http://example.com/", 1000)).ok, false);
});

import assert from "node:assert/strict";
import { test } from "node:test";
import { deflateSync } from "node:zlib";
import { createPdf } from "../../test/helpers/media-fixtures.js";
import { countPdfPages, MAX_INFLATED_BYTES } from "./count-pdf-pages.js";

test("PDF pages are counted from page objects, not the page-tree node", () => {
  const pdf = Buffer.from(
    "%PDF-1.7\n<< /Type /Pages /Count 3 >>\n<< /Type /Page >>\n<< /Type/Page /Parent 1 0 R >>\n<< /Type /Page>>",
  );
  assert.equal(countPdfPages(pdf), 3);
  assert.equal(countPdfPages(createPdf(7)), 7);
  assert.equal(countPdfPages(Buffer.from("<< /Type /PageLabel >> << /Type /Pages /Count 0 >>")), undefined);
});

test("pages packed in object streams are counted (PDF 1.5+ writers put them there)", () => {
  const packed = createPdf(40, { packed: true });
  assert.equal(packed.includes("/Type /Page "), false, "no page dictionary in the file's own bytes");
  assert.equal(countPdfPages(packed), 40);
});

test("a page tree that claims more pages than there are objects is believed", () => {
  assert.equal(countPdfPages(Buffer.from("<< /Type /Pages /Count 250 >> << /Type /Page >>")), 250);
});

test("nothing countable, or a compression bomb past the inflate budget: unknown", () => {
  assert.equal(countPdfPages(Buffer.alloc(250_000)), undefined);
  const bomb = deflateSync(Buffer.alloc(MAX_INFLATED_BYTES + 1024, 0x20));
  const pdf = Buffer.concat([
    Buffer.from("%PDF-1.7\n<< /Type /Page >>\n1 0 obj << /Type /ObjStm /Filter /FlateDecode >>\nstream\n"),
    bomb,
    Buffer.from("\nendstream\n"),
  ]);
  assert.equal(countPdfPages(pdf), undefined);
});

test("reading stays linear and bounded: 8 MB files, dense entries, many object streams", () => {
  const big = createPdf(500, { padTo: 8 * 1024 * 1024 });
  const dense = Buffer.from("/Type /Page ".repeat(700_000));
  const streams = Buffer.concat(
    Array.from({ length: 5_000 }, () =>
      Buffer.concat([
        Buffer.from("<< /Type /ObjStm >>\nstream\n"),
        deflateSync("/Type /Page"),
        Buffer.from("\nendstream\n"),
      ]),
    ),
  );
  const started = performance.now();
  assert.equal(countPdfPages(big), 500);
  assert.equal(countPdfPages(dense), undefined, "more entries than are read: unknown");
  assert.equal(countPdfPages(streams), undefined, "more object streams than are inflated: unknown");
  const elapsed = performance.now() - started;
  assert.ok(elapsed < 1_000, `${elapsed} ms`);
});

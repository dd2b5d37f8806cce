import assert from "node:assert/strict";
import { test } from "node:test";
import { buildTestPdf, buildTextPages } from "../../../test/helpers/build-test-pdf.js";
import { estimatePdfPageCount } from "./estimate-pdf-page-count.js";

test("counts the pages of a PDF whose objects are in plain sight", () => {
  assert.equal(estimatePdfPageCount(buildTestPdf(buildTextPages(1))), 1);
  assert.equal(estimatePdfPageCount(buildTestPdf(buildTextPages(37))), 37);
  assert.equal(estimatePdfPageCount(buildTestPdf([{ image: true }, { lines: ["x"] }, { image: true }])), 3);
});

test("takes the page tree's /Count when it says more than the page objects found", () => {
  const pdf = buildTestPdf(buildTextPages(2)).toString("latin1").replace("/Count 2", "/Count 9");
  assert.equal(estimatePdfPageCount(Buffer.from(pdf, "latin1")), 9);
});

test("handles /Type/Page without spaces and does not count /Pages", () => {
  const text =
    "%PDF-1.4\n1 0 obj<</Type/Pages/Kids[2 0 R 3 0 R]>>endobj 2 0 obj<</Type/Page>>endobj 3 0 obj<</Type /Page/Parent 1 0 R>>endobj";
  assert.equal(estimatePdfPageCount(Buffer.from(text, "latin1")), 2);
});

test("is unknown when object streams may hide the pages, or when nothing was found", () => {
  const compressed = "%PDF-1.5\n4 0 obj<</Type/ObjStm/N 12/First 80/Length 3>>stream\nxyz\nendstream endobj";
  assert.equal(estimatePdfPageCount(Buffer.from(compressed, "latin1")), undefined);
  assert.equal(estimatePdfPageCount(Buffer.from("not a pdf at all")), undefined);
  assert.equal(estimatePdfPageCount(new Uint8Array(0)), undefined);
});

test("scans a slice of a larger buffer without reading outside it", () => {
  const pdf = buildTestPdf(buildTextPages(4));
  const outer = Buffer.concat([buildTestPdf(buildTextPages(20)), pdf, buildTestPdf(buildTextPages(30))]);
  const start = outer.indexOf(pdf);
  assert.equal(estimatePdfPageCount(outer.subarray(start, start + pdf.length)), 4);
});

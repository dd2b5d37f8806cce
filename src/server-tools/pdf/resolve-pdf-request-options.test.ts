import assert from "node:assert/strict";
import { test } from "node:test";
import { buildTestPdf, buildTextPages } from "../../../test/helpers/build-test-pdf.js";
import { decodePdfBase64, hasPdfHeader } from "./read-pdf-bytes.js";
import {
  resolvePdfRequestOptions,
  shouldExtractPdfText,
  toPdfGatewayError,
} from "./resolve-pdf-request-options.js";

const settings = { engine: "native" as const, maxPages: 50, maxFileBytes: 1_000_000 };

test("without parameters the configured engine and caps apply", () => {
  assert.deepEqual(resolvePdfRequestOptions(undefined, settings), {
    ok: true,
    options: { engine: "native", maxPages: 50, maxFileBytes: 1_000_000 },
  });
});

test("a request picks the engine (plain, OpenRouter nesting and spelling) and lowers the caps", () => {
  assert.deepEqual(
    resolvePdfRequestOptions({ engine: "text", max_pages: 3, max_file_bytes: 5000 }, settings),
    { ok: true, options: { engine: "text", maxPages: 3, maxFileBytes: 5000 } },
  );
  assert.deepEqual(resolvePdfRequestOptions({ pdf: { engine: "pdf-text" } }, settings), {
    ok: true,
    options: { engine: "text", maxPages: 50, maxFileBytes: 1_000_000 },
  });
});

test("bad parameters name the field", () => {
  const cases: Array<[Record<string, unknown>, string, RegExp]> = [
    [{ engine: "mistral-ocr" }, "engine", /one of native, text \(this gateway has no OCR engine\)/],
    [{ pdf: { engine: 3 } }, "pdf.engine", /one of native, text/],
    [{ pdf: "text" }, "pdf", /must be an object/],
    [{ max_pages: 0 }, "max_pages", /positive integer/],
    [{ max_pages: 2.5 }, "max_pages", /positive integer/],
    [{ max_pages: 51 }, "max_pages", /at most 50/],
    [{ max_file_bytes: "1MB" }, "max_file_bytes", /positive integer/],
    [{ max_file_bytes: 1_000_001 }, "max_file_bytes", /at most 1000000 \(this gateway's byte cap\)/],
  ];
  for (const [parameters, param, message] of cases) {
    const result = resolvePdfRequestOptions(parameters, settings);
    assert.ok(!result.ok, JSON.stringify(parameters));
    assert.equal(result.param, param);
    assert.match(result.message, message);
  }
});

test("text is extracted for the text engine, and for native only when the model cannot read PDFs", () => {
  assert.equal(shouldExtractPdfText("text", true), true);
  assert.equal(shouldExtractPdfText("native", true), false);
  assert.equal(shouldExtractPdfText("native", false), true);
});

test("a document failure is invalid_request naming the part; an internal one is internal_error", () => {
  const error = toPdfGatewayError(
    { reason: "encrypted", message: '"a.pdf" is encrypted' },
    "messages[0].content[1]",
  );
  assert.equal(error.code, "invalid_request");
  assert.equal(error.status, 400);
  assert.equal(error.param, "messages[0].content[1]");
  // The Messages envelope has no `param`: the message names the part itself.
  assert.equal(error.message, 'messages[0].content[1]: "a.pdf" is encrypted');
  assert.equal(toPdfGatewayError({ reason: "internal", message: "x" }, "p").code, "internal_error");
});

test("base64 is decoded only when the file fits the byte cap", () => {
  const pdf = buildTestPdf(buildTextPages(1));
  const decoded = decodePdfBase64(pdf.toString("base64"), 100_000);
  assert.ok(decoded.ok);
  assert.ok(decoded.bytes.equals(pdf));
  assert.ok(hasPdfHeader(decoded.bytes));
  const refused = decodePdfBase64(pdf.toString("base64"), 100);
  assert.deepEqual(refused, { ok: false, sizeBytes: pdf.length });
});

test("the %PDF- header may follow some leading bytes, but must come early", () => {
  assert.equal(hasPdfHeader(Buffer.from("junk\r\n%PDF-1.4\n")), true);
  assert.equal(hasPdfHeader(Buffer.concat([Buffer.alloc(2000, 0x20), Buffer.from("%PDF-1.4")])), false);
  assert.equal(hasPdfHeader(Buffer.from("PK\u0003\u0004 a zip")), false);
});

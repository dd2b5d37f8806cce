import assert from "node:assert/strict";
import { test } from "node:test";
import { createJpegHeader, createPdf, createPngHeader } from "../../../test/helpers/media-fixtures.js";
import {
  estimateFileTokens,
  estimateImageTokens,
  MAX_IMAGE_TOKENS,
  PDF_PAGE_TOKENS,
} from "./estimate-media-tokens.js";

function base64Image(bytes: Buffer, mediaType: string) {
  return { kind: "base64" as const, mediaType, data: bytes.toString("base64") };
}

test("image tokens are width × height / 750 after the downscale, capped; unknown sizes count as full", () => {
  assert.equal(
    estimateImageTokens(base64Image(createPngHeader(200, 200), "image/png")),
    Math.ceil(40_000 / 750),
  );
  // 4000×1000 scales to 1568×392: 819 tokens.
  assert.equal(
    estimateImageTokens(base64Image(createJpegHeader(4000, 1000), "image/jpeg")),
    Math.ceil((1568 * 392) / 750),
  );
  assert.equal(estimateImageTokens(base64Image(createPngHeader(3000, 3000), "image/png")), MAX_IMAGE_TOKENS);
  assert.equal(estimateImageTokens({ kind: "url", url: "https://example.com/a.png" }), MAX_IMAGE_TOKENS);
  assert.equal(estimateImageTokens(base64Image(Buffer.from("garbage"), "image/png")), MAX_IMAGE_TOKENS);
});

test("PDFs count a full page per page; without countable pages, one per 100 KB", () => {
  const pdf = (bytes: Buffer) => ({
    kind: "base64" as const,
    mediaType: "application/pdf",
    data: bytes.toString("base64"),
  });
  assert.equal(estimateFileTokens(pdf(createPdf(3))), 3 * PDF_PAGE_TOKENS);
  assert.equal(estimateFileTokens(pdf(createPdf(12, { packed: true }))), 12 * PDF_PAGE_TOKENS);
  assert.equal(estimateFileTokens(pdf(Buffer.alloc(250_000))), 3 * PDF_PAGE_TOKENS);
});

test("text documents count their text", () => {
  const text = "The quick brown fox jumps over the lazy dog. ".repeat(20);
  const tokens = estimateFileTokens({
    kind: "base64",
    mediaType: "text/plain",
    data: Buffer.from(text).toString("base64"),
  });
  assert.ok(tokens > 100 && tokens < 400, `${tokens}`);
});

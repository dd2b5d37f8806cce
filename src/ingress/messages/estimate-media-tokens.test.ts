import assert from "node:assert/strict";
import { test } from "node:test";
import {
  countPdfPages,
  estimateFileTokens,
  estimateImageTokens,
  MAX_IMAGE_TOKENS,
  PDF_PAGE_TOKENS,
  readImageSize,
} from "./estimate-media-tokens.js";

function png(width: number, height: number): Buffer {
  const bytes = Buffer.alloc(33);
  bytes.writeUInt32BE(0x89504e47, 0);
  bytes.writeUInt32BE(0x0d0a1a0a, 4);
  bytes.writeUInt32BE(13, 8);
  bytes.write("IHDR", 12, "latin1");
  bytes.writeUInt32BE(width, 16);
  bytes.writeUInt32BE(height, 20);
  return bytes;
}

function gif(width: number, height: number): Buffer {
  const bytes = Buffer.alloc(13);
  bytes.write("GIF89a", 0, "latin1");
  bytes.writeUInt16LE(width, 6);
  bytes.writeUInt16LE(height, 8);
  return bytes;
}

/** SOI, an APP0 segment to skip, then a baseline start-of-frame with the size. */
function jpeg(width: number, height: number): Buffer {
  const app0 = Buffer.from([0xff, 0xe0, 0x00, 0x10, ...Buffer.alloc(14)]);
  const sof = Buffer.alloc(19);
  sof.writeUInt16BE(0xffc0, 0);
  sof.writeUInt16BE(17, 2);
  sof[4] = 8;
  sof.writeUInt16BE(height, 5);
  sof.writeUInt16BE(width, 7);
  return Buffer.concat([Buffer.from([0xff, 0xd8]), app0, sof]);
}

function webpLossless(width: number, height: number): Buffer {
  const bytes = Buffer.alloc(30);
  bytes.write("RIFF", 0, "latin1");
  bytes.write("WEBP", 8, "latin1");
  bytes.write("VP8L", 12, "latin1");
  bytes[20] = 0x2f;
  bytes.writeUInt32LE(((width - 1) & 0x3fff) | (((height - 1) & 0x3fff) << 14), 21);
  return bytes;
}

function base64Image(bytes: Buffer, mediaType: string) {
  return { kind: "base64" as const, mediaType, data: bytes.toString("base64") };
}

test("image sizes are read from PNG, GIF, JPEG and WebP headers", () => {
  assert.deepEqual(readImageSize(png(640, 480)), { width: 640, height: 480 });
  assert.deepEqual(readImageSize(gif(32, 16)), { width: 32, height: 16 });
  assert.deepEqual(readImageSize(jpeg(1024, 768)), { width: 1024, height: 768 });
  assert.deepEqual(readImageSize(webpLossless(300, 150)), { width: 300, height: 150 });
  assert.equal(readImageSize(Buffer.from("not an image")), undefined);
  assert.equal(readImageSize(png(640, 480).subarray(0, 12)), undefined);
});

test("image tokens are width × height / 750 after the downscale, capped; unknown sizes count as full", () => {
  assert.equal(estimateImageTokens(base64Image(png(200, 200), "image/png")), Math.ceil(40_000 / 750));
  // 4000×1000 scales to 1568×392: 819 tokens.
  assert.equal(
    estimateImageTokens(base64Image(jpeg(4000, 1000), "image/jpeg")),
    Math.ceil((1568 * 392) / 750),
  );
  assert.equal(estimateImageTokens(base64Image(png(3000, 3000), "image/png")), MAX_IMAGE_TOKENS);
  assert.equal(estimateImageTokens({ kind: "url", url: "https://example.com/a.png" }), MAX_IMAGE_TOKENS);
  assert.equal(estimateImageTokens(base64Image(Buffer.from("garbage"), "image/png")), MAX_IMAGE_TOKENS);
});

test("PDF pages are counted from page objects, not the page-tree node", () => {
  const pdf = Buffer.from(
    "%PDF-1.7\n<< /Type /Pages /Count 3 >>\n<< /Type /Page >>\n<< /Type/Page /Parent 1 0 R >>\n<< /Type /Page>>",
  );
  assert.equal(countPdfPages(pdf), 3);
  assert.equal(countPdfPages(Buffer.alloc(250_000)), 3, "without page objects: one page per 100 KB");
  assert.equal(
    estimateFileTokens({ kind: "base64", mediaType: "application/pdf", data: pdf.toString("base64") }),
    3 * PDF_PAGE_TOKENS,
  );
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

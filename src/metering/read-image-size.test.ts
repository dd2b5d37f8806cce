import assert from "node:assert/strict";
import { test } from "node:test";
import {
  createGifHeader,
  createJpegHeader,
  createPngHeader,
  createWebpLosslessHeader,
} from "../../test/helpers/media-fixtures.js";
import { readImageSize, readImageSourceSize } from "./read-image-size.js";

test("image sizes are read from PNG, GIF, JPEG and WebP headers", () => {
  assert.deepEqual(readImageSize(createPngHeader(640, 480)), { width: 640, height: 480 });
  assert.deepEqual(readImageSize(createGifHeader(32, 16)), { width: 32, height: 16 });
  assert.deepEqual(readImageSize(createJpegHeader(1024, 768)), { width: 1024, height: 768 });
  assert.deepEqual(readImageSize(createWebpLosslessHeader(300, 150)), { width: 300, height: 150 });
  assert.equal(readImageSize(Buffer.from("not an image")), undefined);
  assert.equal(readImageSize(createPngHeader(640, 480).subarray(0, 12)), undefined);
});

test("a URL has no size; a base64 source is read from its first bytes only", () => {
  assert.equal(readImageSourceSize({ kind: "url", url: "https://example.com/a.png" }), undefined);
  const huge = Buffer.concat([createPngHeader(10, 20), Buffer.alloc(8 * 1024 * 1024)]).toString("base64");
  const started = performance.now();
  assert.deepEqual(readImageSourceSize({ kind: "base64", mediaType: "image/png", data: huge }), {
    width: 10,
    height: 20,
  });
  assert.ok(performance.now() - started < 50, "reads a prefix, not the 8 MB");
});

import assert from "node:assert/strict";
import { test } from "node:test";
import { PDF_TOOL_DEFAULTS, pdfToolConfigSchema, resolvePdfToolSettings } from "./pdf-config.js";

test("an empty pdf section gives the documented defaults, free of charge", () => {
  const settings = resolvePdfToolSettings(pdfToolConfigSchema.parse({}));
  assert.deepEqual(settings, { ...PDF_TOOL_DEFAULTS });
  assert.equal(settings.engine, "native");
  assert.equal(settings.pricePerPageMicroUsd, 0);
});

test("the price per page is exact integer micro-USD from decimal text or a number", () => {
  const parse = (price: unknown) =>
    resolvePdfToolSettings(pdfToolConfigSchema.parse({ price_per_page_usd: price })).pricePerPageMicroUsd;
  assert.equal(parse("0.001"), 1000);
  assert.equal(parse(0.000003), 3);
  assert.equal(parse("0.1"), 100_000);
});

test("bad values are refused with the field's path", () => {
  const cases: Array<[Record<string, unknown>, string]> = [
    [{ price_per_page_usd: "0.0000001" }, "price_per_page_usd"],
    [{ price_per_page_usd: "-1" }, "price_per_page_usd"],
    [{ engine: "ocr" }, "engine"],
    [{ max_pages: 0 }, "max_pages"],
    [{ timeout_ms: 10 }, "timeout_ms"],
    [{ unknown_field: 1 }, ""],
  ];
  for (const [file, path] of cases) {
    const result = pdfToolConfigSchema.safeParse(file);
    assert.equal(result.success, false, JSON.stringify(file));
    assert.equal(result.error?.issues[0].path.join("."), path, JSON.stringify(file));
  }
});

import assert from "node:assert/strict";
import { test } from "node:test";
import { GatewayError } from "../errors/gateway-error.js";
import { formatMicroUsd, parseUsdToMicroUsd, tryParseUsdToMicroUsd } from "./parse-usd.js";

test("parse-usd converts decimal text exactly", () => {
  const cases: Array<[string | number, number]> = [
    ["0.000001", 1],
    ["1", 1_000_000],
    ["5.5", 5_500_000],
    ["0.1", 100_000],
    ["12.345678", 12_345_678],
    ["1.500000", 1_500_000],
    ["1.0000000", 1_000_000],
    ["007", 7_000_000],
    ["5.", 5_000_000],
    [" 2 ", 2_000_000],
    ["1e-6", 1],
    ["2.5E3", 2_500_000_000],
    ["0", 0],
    ["9007199254.740991", Number.MAX_SAFE_INTEGER],
    [0.1, 100_000],
    [0.3, 300_000],
    [1e-6, 1],
    [1234.5, 1_234_500_000],
    [3000, 3_000_000_000],
  ];
  for (const [input, expected] of cases) {
    assert.equal(parseUsdToMicroUsd(input), expected, `input ${JSON.stringify(input)}`);
  }
});

test("parse-usd rejects what it cannot convert exactly", () => {
  const rejected: unknown[] = [
    "0.0000001",
    "1.1234567",
    1e-7,
    "abc",
    "",
    "1,5",
    ".5",
    "+1",
    "1e",
    "0x10",
    "Infinity",
    Number.NaN,
    Number.POSITIVE_INFINITY,
    "9007199254.740992",
    "1e30",
    null,
    undefined,
    true,
    {},
  ];
  for (const input of rejected) {
    assert.equal(tryParseUsdToMicroUsd(input).ok, false, `input ${String(input)}`);
  }
});

test("parse-usd signs and zero follow the options", () => {
  assert.equal(tryParseUsdToMicroUsd("-1").ok, false);
  assert.equal(parseUsdToMicroUsd("-1.25", { allowNegative: true }), -1_250_000);
  assert.equal(parseUsdToMicroUsd(-0.000001, { allowNegative: true }), -1);
  assert.equal(parseUsdToMicroUsd("-0"), 0);
  assert.equal(tryParseUsdToMicroUsd("0", { allowZero: false }).ok, false);
  assert.equal(tryParseUsdToMicroUsd("0.0000000", { allowZero: false }).ok, false);
});

test("parseUsdToMicroUsd throws invalid_request naming the parameter", () => {
  assert.throws(
    () => parseUsdToMicroUsd("0.0000001", { param: "credits_usd" }),
    (error) =>
      error instanceof GatewayError &&
      error.code === "invalid_request" &&
      error.param === "credits_usd" &&
      /more than 6 decimals/.test(error.message),
  );
});

test("formatMicroUsd is the exact inverse", () => {
  assert.equal(formatMicroUsd(1), "0.000001");
  assert.equal(formatMicroUsd(1_500_000), "1.5");
  assert.equal(formatMicroUsd(0), "0");
  assert.equal(formatMicroUsd(-12_345_678), "-12.345678");
  for (const value of [1, 999_999, 1_000_000, 123_456_789, Number.MAX_SAFE_INTEGER, -7]) {
    assert.equal(parseUsdToMicroUsd(formatMicroUsd(value), { allowNegative: true }), value);
  }
});

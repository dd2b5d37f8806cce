import assert from "node:assert/strict";
import { test } from "node:test";
import { parseExpiry } from "./parse-expiry.js";

test("parseExpiry reads ISO-8601 dates and date-times, UTC when no zone is given", () => {
  assert.equal(parseExpiry("2031-01-31").toISOString(), "2031-01-31T00:00:00.000Z");
  assert.equal(parseExpiry("2031-01-31T12:30").toISOString(), "2031-01-31T12:30:00.000Z");
  assert.equal(parseExpiry("2031-01-31T12:30:15.5Z").toISOString(), "2031-01-31T12:30:15.500Z");
  assert.equal(parseExpiry("2031-01-31T12:00:00+02:00").toISOString(), "2031-01-31T10:00:00.000Z");
  assert.equal(parseExpiry("2031-01-31T12:00:00-0130").toISOString(), "2031-01-31T13:30:00.000Z");
});

test("parseExpiry rejects other formats and impossible dates", () => {
  for (const text of [
    "tomorrow",
    "Jan 5 2031",
    "2031-1-5",
    "2031-02-30",
    "2031-13-01",
    "2031-01-01T25:00Z",
    "",
    "1767225600",
  ]) {
    assert.throws(() => parseExpiry(text), /ISO-8601/, text);
  }
});

import assert from "node:assert/strict";
import { test } from "node:test";
import { normalizeSearchDate } from "./normalize-search-date.js";

const NOW = new Date("2026-03-10T12:00:00Z");

test("each backend's date spelling becomes one ISO form", () => {
  const cases: Array<[unknown, string | null]> = [
    ["2026-03-08", "2026-03-08"],
    ["2026-03-08T09:30:00", "2026-03-08T09:30:00Z"], // SearXNG / Brave page_age: no zone = UTC
    ["2026-03-08 09:30:00.123456", "2026-03-08T09:30:00Z"],
    ["2026-03-08T09:30:00+02:00", "2026-03-08T07:30:00Z"],
    ["2026-03-08T23:30:00-0230", "2026-03-09T02:00:00Z"],
    ["2026-03-08T09:30Z", "2026-03-08T09:30:00Z"],
    ["Mon, 09 Mar 2026 21:15:00 GMT", "2026-03-09T21:15:00Z"], // Tavily
    ["Mon, 09 Mar 2026 21:15:00 +0100", "2026-03-09T20:15:00Z"],
    ["March 3, 2024", "2024-03-03"], // Brave age
    ["3 Mar 2024", "2024-03-03"],
    ["2 days ago", "2026-03-08"],
    ["1 week ago", "2026-03-03"],
    ["an hour ago", "2026-03-10"],
    ["5 hours ago", "2026-03-10"],
    ["3 months ago", "2025-12-10"],
  ];
  for (const [input, expected] of cases)
    assert.equal(normalizeSearchDate(input, NOW), expected, String(input));
});

test("anything that is not clearly a date is null", () => {
  for (const input of [
    null,
    undefined,
    42,
    "",
    "yesterday-ish",
    "hello 5", // V8 would read this as a date in 2001
    "2026-02-30",
    "2026-13-01",
    "1899-01-01",
    "2027-01-01", // ahead of the clock
    "May 2026 maybe 99:99",
    "x".repeat(100),
  ]) {
    assert.equal(normalizeSearchDate(input, NOW), null, String(input));
  }
});

test("a date without a zone means UTC whatever the server's zone", () => {
  const saved = process.env.TZ;
  process.env.TZ = "America/Los_Angeles";
  try {
    assert.equal(normalizeSearchDate("2026-03-08T09:30:00", NOW), "2026-03-08T09:30:00Z");
    assert.equal(normalizeSearchDate("March 3, 2024", NOW), "2024-03-03");
    assert.equal(normalizeSearchDate("March 3, 2024 23:30", NOW), "2024-03-03T23:30:00Z");
  } finally {
    if (saved === undefined) delete process.env.TZ;
    else process.env.TZ = saved;
  }
});

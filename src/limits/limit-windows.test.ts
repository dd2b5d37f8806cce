import assert from "node:assert/strict";
import { test } from "node:test";
import { computeLimitWindows, isWithinWindows } from "./limit-windows.js";

test("day and month windows in UTC, across month, leap-day and year boundaries", () => {
  const cases: Array<[string, string, string, string, string]> = [
    // now, day id, day end, month id, month end
    [
      "2026-05-21T13:45:00.000Z",
      "d20260521",
      "2026-05-22T00:00:00.000Z",
      "m202605",
      "2026-06-01T00:00:00.000Z",
    ],
    [
      "2027-01-31T23:59:59.999Z",
      "d20270131",
      "2027-02-01T00:00:00.000Z",
      "m202701",
      "2027-02-01T00:00:00.000Z",
    ],
    [
      "2028-02-28T23:59:59.500Z",
      "d20280228",
      "2028-02-29T00:00:00.000Z",
      "m202802",
      "2028-03-01T00:00:00.000Z",
    ],
    [
      "2028-02-29T00:00:00.500Z",
      "d20280229",
      "2028-03-01T00:00:00.000Z",
      "m202802",
      "2028-03-01T00:00:00.000Z",
    ],
    [
      "2026-12-31T23:59:59.999Z",
      "d20261231",
      "2027-01-01T00:00:00.000Z",
      "m202612",
      "2027-01-01T00:00:00.000Z",
    ],
    [
      "2027-01-01T00:00:00.000Z",
      "d20270101",
      "2027-01-02T00:00:00.000Z",
      "m202701",
      "2027-02-01T00:00:00.000Z",
    ],
  ];
  for (const [now, dayId, dayEnd, monthId, monthEnd] of cases) {
    const windows = computeLimitWindows(Date.parse(now), null);
    assert.equal(windows.daily.id, dayId, now);
    assert.equal(new Date(windows.daily.endMs!).toISOString(), dayEnd, now);
    assert.equal(windows.daily.endMs! - windows.daily.startMs, 86_400_000, now);
    assert.equal(windows.monthly.id, monthId, now);
    assert.equal(new Date(windows.monthly.endMs!).toISOString(), monthEnd, now);
    assert.ok(isWithinWindows(windows, Date.parse(now)));
    assert.equal(isWithinWindows(windows, windows.daily.endMs!), false);
  }
});

test("the total window starts at the last reset and never ends", () => {
  assert.deepEqual(computeLimitWindows(Date.now(), null).total, { id: "t0", startMs: 0, endMs: null });
  const reset = new Date("2026-03-04T05:06:07.089Z");
  assert.deepEqual(computeLimitWindows(Date.now(), reset).total, {
    id: `t${reset.getTime()}`,
    startMs: reset.getTime(),
    endMs: null,
  });
});

import assert from "node:assert/strict";
import { test } from "node:test";
import { type DatetimeToolResult, runDatetimeTool } from "./run-datetime-tool.js";

const at = (iso: string) => ({ now: () => new Date(iso), defaultTimeZone: "UTC" });

function expectOk(result: DatetimeToolResult) {
  assert.equal(result.ok, true, result.ok ? "" : result.message);
  return result as Extract<DatetimeToolResult, { ok: true }>;
}

function expectError(result: DatetimeToolResult, error: string, param?: string) {
  assert.equal(result.ok, false);
  assert.ok(!result.ok);
  assert.equal(result.error, error);
  assert.equal(result.param, param);
  assert.deepEqual(JSON.parse(result.text), { error, message: result.message });
  assert.equal(result.costMicroUsd, 0);
  return result;
}

test("now, in UTC and in the requested zone, from the injected clock", () => {
  const result = expectOk(runDatetimeTool('{"timezone":"europe/paris"}', at("2026-01-15T09:05:30.900Z")));
  assert.equal(result.mode, "now");
  assert.equal(result.utc, "2026-01-15T09:05:30Z");
  assert.equal(result.unixSeconds, 1768467930);
  assert.equal(result.timezone, "Europe/Paris");
  assert.equal(result.datetime, "2026-01-15T10:05:30+01:00");
  assert.equal(result.costMicroUsd, 0);
  assert.deepEqual(JSON.parse(result.text), {
    utc: "2026-01-15T09:05:30Z",
    unix: 1768467930,
    times: [
      {
        timezone: "UTC",
        local: "2026-01-15T09:05:30+00:00",
        utc_offset: "+00:00",
        weekday: "Thursday",
        dst: false,
      },
      {
        timezone: "Europe/Paris",
        local: "2026-01-15T10:05:30+01:00",
        utc_offset: "+01:00",
        weekday: "Thursday",
        dst: false,
      },
    ],
  });
});

test("no arguments (or empty ones) answer in the default zone", () => {
  const context = { now: () => new Date("2026-07-01T23:30:00Z"), defaultTimeZone: "Asia/Kolkata" };
  for (const input of ["", "{}", undefined, null]) {
    const result = expectOk(runDatetimeTool(input, context));
    assert.equal(result.datetime, "2026-07-02T05:00:00+05:30");
    assert.deepEqual(
      result.times.map((view) => view.weekday),
      ["Wednesday", "Thursday"],
    );
  }
});

test("either side of a daylight-saving change the offset and the dst flag follow the clock", () => {
  const cases: Array<[string, string, string, boolean]> = [
    // Europe springs forward at 01:00 UTC on the last Sunday of March.
    ["2026-03-29T00:59:59Z", "Europe/Paris", "2026-03-29T01:59:59+01:00", false],
    ["2026-03-29T01:00:00Z", "Europe/Paris", "2026-03-29T03:00:00+02:00", true],
    // ... and falls back at 01:00 UTC on the last Sunday of October.
    ["2026-10-25T00:59:59Z", "Europe/Paris", "2026-10-25T02:59:59+02:00", true],
    ["2026-10-25T01:00:00Z", "Europe/Paris", "2026-10-25T02:00:00+01:00", false],
    // The US changes on other dates, at 2 a.m. local.
    ["2026-03-08T06:59:59Z", "America/New_York", "2026-03-08T01:59:59-05:00", false],
    ["2026-03-08T07:00:00Z", "America/New_York", "2026-03-08T03:00:00-04:00", true],
    // Southern hemisphere: summer time in January.
    ["2026-01-15T00:00:00Z", "Australia/Sydney", "2026-01-15T11:00:00+11:00", true],
    ["2026-07-15T00:00:00Z", "Australia/Sydney", "2026-07-15T10:00:00+10:00", false],
    // A half-hour daylight-saving shift.
    ["2026-01-15T00:00:00Z", "Australia/Lord_Howe", "2026-01-15T11:00:00+11:00", true],
    ["2026-07-15T00:00:00Z", "Australia/Lord_Howe", "2026-07-15T10:30:00+10:30", false],
  ];
  for (const [now, zone, local, dst] of cases) {
    const result = expectOk(runDatetimeTool({ timezone: zone }, at(now)));
    assert.equal(result.datetime, local, `${zone} at ${now}`);
    assert.equal(result.times[1].isDst, dst, `${zone} at ${now}`);
  }
});

test("an instant with an offset converts to the target zone", () => {
  const result = expectOk(
    runDatetimeTool(
      { time: "2026-06-01T12:00:00+02:00", timezone: "America/Los_Angeles" },
      at("2000-01-01T00:00:00Z"),
    ),
  );
  assert.equal(result.mode, "convert");
  assert.equal(result.utc, "2026-06-01T10:00:00Z");
  assert.equal(result.datetime, "2026-06-01T03:00:00-07:00");
  assert.deepEqual(
    result.times.map((view) => view.timezone),
    ["UTC", "America/Los_Angeles"],
  );
  const zulu = expectOk(
    runDatetimeTool({ time: "2026-06-01T12:00Z", timezone: "Asia/Tokyo" }, at("2000-01-01T00:00:00Z")),
  );
  assert.equal(zulu.datetime, "2026-06-01T21:00:00+09:00");
});

test("a local time converts from its zone; times skipped or repeated by DST are resolved and said so", () => {
  const plain = expectOk(
    runDatetimeTool(
      { time: "2026-07-14T09:00", from_timezone: "Europe/Paris", timezone: "America/New_York" },
      at("2000-01-01T00:00:00Z"),
    ),
  );
  assert.equal(plain.utc, "2026-07-14T07:00:00Z");
  assert.equal(plain.datetime, "2026-07-14T03:00:00-04:00");
  assert.deepEqual(
    plain.times.map((view) => view.local),
    ["2026-07-14T07:00:00+00:00", "2026-07-14T09:00:00+02:00", "2026-07-14T03:00:00-04:00"],
  );
  assert.equal(plain.note, undefined);

  const gap = expectOk(
    runDatetimeTool(
      { time: "2026-03-29T02:30:00", from_timezone: "Europe/Paris" },
      at("2000-01-01T00:00:00Z"),
    ),
  );
  assert.equal(gap.utc, "2026-03-29T01:30:00Z");
  assert.equal(gap.times[1].local, "2026-03-29T03:30:00+02:00");
  assert.match(gap.note!, /does not exist in Europe\/Paris .* 1 hour later was used/);
  assert.equal(JSON.parse(gap.text).note, gap.note);

  const overlap = expectOk(
    runDatetimeTool(
      { time: "2026-10-25T02:30:00", from_timezone: "Europe/Paris" },
      at("2000-01-01T00:00:00Z"),
    ),
  );
  assert.equal(overlap.utc, "2026-10-25T00:30:00Z");
  assert.equal(overlap.times[1].local, "2026-10-25T02:30:00+02:00");
  assert.match(overlap.note!, /happened twice .* the earlier one was used/);

  const lordHowe = expectOk(
    runDatetimeTool(
      { time: "2026-10-04T02:15:00", from_timezone: "Australia/Lord_Howe" },
      at("2000-01-01T00:00:00Z"),
    ),
  );
  assert.equal(lordHowe.times[1].local, "2026-10-04T02:45:00+11:00");
  assert.match(lordHowe.note!, /30 minutes/);

  const dateOnly = expectOk(
    runDatetimeTool({ time: "2026-12-31", timezone: "Pacific/Kiritimati" }, at("2000-01-01T00:00:00Z")),
  );
  assert.equal(dateOnly.utc, "2026-12-31T00:00:00Z");
  assert.equal(dateOnly.datetime, "2026-12-31T14:00:00+14:00");
});

test("unknown zones and bad times are tool results naming the field, not throws", () => {
  const context = at("2026-01-01T00:00:00Z");
  const unknown = expectError(
    runDatetimeTool({ timezone: "Mars/Olympus_Mons" }, context),
    "unknown_time_zone",
    "timezone",
  );
  assert.match(unknown.message, /Unknown time zone "Mars\/Olympus_Mons".*IANA name such as "Europe\/Paris"/);
  expectError(runDatetimeTool({ timezone: "+01:00" }, context), "unknown_time_zone", "timezone");
  expectError(runDatetimeTool({ timezone: "../../etc/passwd" }, context), "unknown_time_zone", "timezone");
  expectError(
    runDatetimeTool({ time: "2026-01-01T00:00", from_timezone: "Nowhere/City" }, context),
    "unknown_time_zone",
    "from_timezone",
  );
  expectError(
    runDatetimeTool({ time: "2026-01-01T00:00Z", from_timezone: "Nowhere/City" }, context),
    "unknown_time_zone",
    "from_timezone",
  );
  for (const time of [
    "tomorrow",
    "2026-02-30T10:00",
    "2026-01-01T24:00",
    "2026-01-01T10:00+19:00",
    "0000-01-01",
  ]) {
    expectError(runDatetimeTool({ time }, context), "invalid_time", "time");
  }
  expectError(runDatetimeTool({ from_timezone: "UTC" }, context), "invalid_input", "from_timezone");
  expectError(runDatetimeTool({ timezone: 5 }, context), "invalid_input", "timezone");
  expectError(runDatetimeTool("[1,2]", context), "invalid_input");
  expectError(runDatetimeTool("{oops", context), "invalid_input");
});

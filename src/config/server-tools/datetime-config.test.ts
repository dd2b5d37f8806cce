import assert from "node:assert/strict";
import { test } from "node:test";
import { DATETIME_TOOL_DEFINITION } from "../../server-tools/datetime/datetime-tool-definition.js";
import { datetimeConfigSchema } from "./datetime-config.js";

test("the section may be left out: enabled, answering in UTC", () => {
  assert.deepEqual(datetimeConfigSchema.parse(undefined), { enabled: true, default_timezone: "UTC" });
});

test("the default zone is checked and stored in its canonical spelling", () => {
  assert.deepEqual(datetimeConfigSchema.parse({ default_timezone: "europe/berlin", enabled: false }), {
    enabled: false,
    default_timezone: "Europe/Berlin",
  });
  const refused = datetimeConfigSchema.safeParse({ default_timezone: "Europe/Atlantis" });
  assert.equal(refused.success, false);
  assert.match(refused.error!.issues[0].message, /unknown IANA time zone "Europe\/Atlantis"/);
  assert.equal(datetimeConfigSchema.safeParse({ other: 1 }).success, false);
});

test("the model-facing definition names the tool datetime and needs no argument", () => {
  assert.equal(DATETIME_TOOL_DEFINITION.name, "datetime");
  const parameters = DATETIME_TOOL_DEFINITION.parameters as { properties: object; required?: string[] };
  assert.deepEqual(Object.keys(parameters.properties), ["timezone", "time", "from_timezone"]);
  assert.equal(parameters.required, undefined);
});

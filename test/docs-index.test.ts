/**
 * The documentation stays findable: docs/README.md links every page of docs/, and CHANGELOG.md names
 * every migration (docs/upgrading.md sends readers there to see what an upgrade applies).
 */
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { test } from "node:test";

const ROOT = new URL("../", import.meta.url).pathname;

test("docs/README.md links every page of docs/", () => {
  const index = readFileSync(`${ROOT}docs/README.md`, "utf8");
  const pages = readdirSync(`${ROOT}docs`).filter((name) => name.endsWith(".md") && name !== "README.md");
  const unlinked = pages.filter((page) => !index.includes(`](${page})`));
  assert.deepEqual(unlinked, [], "pages docs/README.md does not link");
  assert.ok(index.includes("](decisions/README.md)"), "the decision records");
});

test("CHANGELOG.md names every migration", () => {
  const changelog = readFileSync(`${ROOT}CHANGELOG.md`, "utf8");
  const migrations = readdirSync(`${ROOT}src/storage/sql/migrations`)
    .filter((name) => name.endsWith(".sql"))
    .map((name) => name.slice(0, -".sql".length));
  assert.ok(migrations.length > 0);
  assert.deepEqual(
    migrations.filter((name) => !changelog.includes(`\`${name}\``)),
    [],
    "migrations the changelog does not name",
  );
});

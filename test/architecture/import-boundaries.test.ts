import assert from "node:assert/strict";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { test } from "node:test";
import { readBoundaryTables } from "./boundary-table.js";
import { checkBoundaries } from "./check-boundaries.js";
import { readImportGraph, type SourceFile } from "./import-graph.js";

const ROOT = new URL("../..", import.meta.url).pathname;
const SOURCE = join(ROOT, "src");

function listFolders(folder: string, out: string[]): string[] {
  for (const entry of readdirSync(folder)) {
    const path = join(folder, entry);
    if (!statSync(path).isDirectory()) continue;
    out.push(`${relative(SOURCE, path)}/`);
    listFolders(path, out);
  }
  return out;
}

test("architecture: src/ keeps the boundary table of docs/architecture.md, without cycles", () => {
  const tables = readBoundaryTables(readFileSync(join(ROOT, "docs/architecture.md"), "utf8"));
  assert.ok(tables.folders.length > 10, "the Folders table was read");
  const problems = checkBoundaries(tables, readImportGraph(SOURCE), listFolders(SOURCE, []), (path) =>
    existsSync(join(ROOT, path)),
  );
  assert.deepEqual(problems, [], `\n${problems.join("\n")}\n`);
});

// The checker on a small made-up tree: each kind of breach is reported.
const TABLE = `
## Folders

| folder | job | may import |
|---|---|---|
| \`canonical/\` | types | nothing |
| \`engine/\` | runs | canonical, providers (its ports) |
| \`providers/\` | upstream | canonical |
| \`providers/*\` | kinds | canonical, providers |
| \`storage/\` | data | engine |
| \`main.ts\` | entry | everything |

## Packages

| package | only in |
|---|---|
| \`pg\` | storage |
`;
const FOLDERS = ["canonical/", "engine/", "providers/", "providers/kind-a/", "storage/"];

function file(path: string, imports: string[] = [], packages: string[] = []): SourceFile {
  return { path, imports, packages };
}

function check(files: SourceFile[]): string[] {
  return checkBoundaries(readBoundaryTables(TABLE), files, FOLDERS, () => false);
}

test("architecture check: a tree that keeps the table passes", () => {
  const files = [
    file("canonical/request.ts"),
    file("providers/adapter.ts", ["canonical/request.ts"]),
    file("providers/kind-a/adapter.ts", ["providers/adapter.ts", "canonical/request.ts"]),
    file("engine/run.ts", ["providers/adapter.ts"]),
    file("storage/records.ts", ["engine/run.ts"], ["pg"]),
    file("main.ts", ["storage/records.ts", "providers/kind-a/adapter.ts"]),
  ];
  assert.deepEqual(check(files), []);
});

test("architecture check: a wrong arrow, a cycle, a stray package and an unlisted file are reported", () => {
  const problems = check([
    file("canonical/request.ts", ["engine/run.ts"]),
    file("engine/run.ts", ["canonical/request.ts"], ["pg"]),
    file("providers/kind-a/a.ts", ["providers/kind-a/b.ts"]),
    file("providers/kind-a/b.ts", ["providers/kind-a/a.ts"]),
    file("cli/run.ts"),
  ]);
  assert.deepEqual(problems, [
    "the table names main.ts, which does not exist",
    "src/canonical/request.ts imports src/engine/run.ts: canonical/ may not import engine/",
    "src/cli/run.ts is in no row of the table",
    "src/engine/run.ts imports pg, which only storage/ may import",
    "folder cycle: canonical/ ⇄ engine/",
    "file cycle: canonical/request.ts ⇄ engine/run.ts",
    "file cycle: providers/kind-a/a.ts ⇄ providers/kind-a/b.ts",
  ]);
});

test("architecture check: a loop between top-level folders is reported even when single-file rows allow each arrow", () => {
  const table = `
## Folders

| folder | job | may import |
|---|---|---|
| \`config/\` | settings | tools/settings.ts |
| \`tools/\` | tools | config |
| \`tools/settings.ts\` | a tool's settings | nothing |

## Packages

| package | only in |
|---|---|
`;
  const problems = checkBoundaries(
    readBoundaryTables(table),
    [
      file("config/load.ts", ["tools/settings.ts"]),
      file("tools/settings.ts"),
      file("tools/run.ts", ["config/load.ts"]),
    ],
    ["config/", "tools/"],
    () => false,
  );
  assert.deepEqual(problems, ["top-level folder cycle: config/ ⇄ tools/"]);
});

#!/usr/bin/env node
// Runs every *.test.ts under src/ and test/ with node's test runner (Node 20 does not expand
// globs itself). Extra arguments narrow the run: `npm test -- src/errors`.
import { spawnSync } from "node:child_process";
import { readdirSync, statSync } from "node:fs";
import { join, relative } from "node:path";

const root = new URL("..", import.meta.url).pathname;
const roots = process.argv.slice(2).length > 0 ? process.argv.slice(2) : ["src", "test"];

function collect(path, out) {
  const stats = statSync(path, { throwIfNoEntry: false });
  if (!stats) return out;
  if (stats.isFile()) {
    if (path.endsWith(".test.ts")) out.push(path);
    return out;
  }
  for (const entry of readdirSync(path)) {
    if (entry === "node_modules" || entry.startsWith(".")) continue;
    collect(join(path, entry), out);
  }
  return out;
}

const files = roots
  .flatMap((r) => collect(join(root, r), []))
  .map((f) => relative(root, f))
  .sort();
if (files.length === 0) {
  console.error("no test files found under", roots.join(", "));
  process.exit(1);
}
// A test file that cannot end (a child process left running holds its pipes open) is cancelled
// and fails after 15 minutes instead of holding CI until its 90-minute limit; no file
// takes more than a few minutes.
const FILE_TIMEOUT_MS = 15 * 60 * 1000;
// Files under test/timing/ assert how fast the gateway answers while it does heavy work (the event
// loop's delay, a deadline kept to the second). Two files at once on a 2-core machine would measure
// each other, so these run after the others, one at a time.
const isTiming = (file) => file.split(/[\\/]/).includes("timing");
const passes = [
  { files: files.filter((file) => !isTiming(file)), concurrency: 2 },
  { files: files.filter(isTiming), concurrency: 1 },
];
let failed = false;
for (const pass of passes) {
  if (pass.files.length === 0) continue;
  const result = spawnSync(
    process.execPath,
    [
      "--import",
      "tsx",
      "--test",
      "--test-reporter=spec",
      `--test-concurrency=${pass.concurrency}`,
      `--test-timeout=${FILE_TIMEOUT_MS}`,
      ...pass.files,
    ],
    { cwd: root, stdio: "inherit", env: process.env },
  );
  if (result.status !== 0) failed = true;
}
process.exit(failed ? 1 : 0);

#!/usr/bin/env node
// Compiles src/ to plain JavaScript in dist/ (same layout, one file per module, no bundling), so the
// gateway runs on bare Node instead of under the tsx loader: less memory at start and no loader
// thread (docs/decisions/0004-typescript-compiled-in-production.md). Quick enough that `npm start`
// runs it every time, so dist/ can never be stale. Type checking stays with `npm run typecheck`.
//
// Files are replaced only when their content changed, each by an atomic rename, and files whose
// module is gone are removed: a gateway already running from dist/ (tests, the benchmark) never
// reads a half-written module while another build runs.
import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { buildSync } from "esbuild";

const root = new URL("..", import.meta.url).pathname;
const source = join(root, "src");
const output = join(root, "dist");

function collect(directory, accept, out) {
  for (const entry of readdirSync(directory, { withFileTypes: true })) {
    const path = join(directory, entry.name);
    if (entry.isDirectory()) collect(path, accept, out);
    else if (accept(entry.name)) out.push(path);
  }
  return out;
}

function writeIfChanged(path, contents) {
  try {
    if (Buffer.compare(readFileSync(path), contents) === 0) return;
  } catch {
    mkdirSync(dirname(path), { recursive: true });
  }
  const temporary = `${path}.${process.pid}.tmp`;
  writeFileSync(temporary, contents);
  renameSync(temporary, path);
}

const started = performance.now();
const startedAt = Date.now();
const entryPoints = collect(source, (name) => name.endsWith(".ts") && !name.endsWith(".test.ts"), []);
const { outputFiles } = buildSync({
  entryPoints,
  outdir: output,
  outbase: source,
  format: "esm",
  platform: "node",
  target: "node20",
  logLevel: "warning",
  write: false,
});
const expected = new Set();
for (const file of outputFiles) {
  expected.add(file.path);
  writeIfChanged(file.path, Buffer.from(file.contents));
}
// Non-TypeScript files the modules read next to themselves (import.meta.url).
for (const path of collect(
  join(source, "storage", "sql", "migrations"),
  (name) => name.endsWith(".sql"),
  [],
)) {
  const target = join(output, relative(source, path));
  expected.add(target);
  writeIfChanged(target, readFileSync(path));
}
// Dated with the build's start: a source saved while the build ran is newer, so the admin CLI
// (bin/gateway-admin.js), which compiles only when a source is newer than the stamp, builds again.
const stamp = join(output, ".build-stamp");
expected.add(stamp);
writeFileSync(stamp, "");
utimesSync(stamp, startedAt / 1000, startedAt / 1000);
for (const path of collect(output, () => true, [])) {
  if (!expected.has(path) && !path.endsWith(".tmp")) rmSync(path, { force: true });
}
const milliseconds = Math.round(performance.now() - started);
console.error(`build: ${entryPoints.length} modules → ${relative(root, output)}/ in ${milliseconds} ms`);

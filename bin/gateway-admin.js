#!/usr/bin/env node
// `npx gateway-admin` and `npm run admin`: the admin CLI compiled to plain JavaScript
// (dist/cli/admin.js), so a call starts on bare Node instead of under the tsx loader. dist/ is
// compiled first (scripts/build.mjs, about a second) when it is missing or older than a source
// file: the build stamps dist/ with its start time, and a file under src/ changed since is newer.
import { spawnSync } from "node:child_process";
import { readdirSync, statSync } from "node:fs";
import { join } from "node:path";

const root = new URL("..", import.meta.url).pathname;

function isNewer(directory, than) {
  for (const entry of readdirSync(directory, { withFileTypes: true })) {
    const path = join(directory, entry.name);
    if (entry.isDirectory()) {
      if (isNewer(path, than)) return true;
    } else if (!entry.name.endsWith(".test.ts") && statSync(path).mtimeMs > than) {
      return true;
    }
  }
  return false;
}

const stamp = statSync(join(root, "dist", ".build-stamp"), { throwIfNoEntry: false });
const entry = statSync(join(root, "dist", "cli", "admin.js"), { throwIfNoEntry: false });
// The container image ships dist/ without src/: nothing to compile, nothing to be stale against.
const hasSource = statSync(join(root, "src"), { throwIfNoEntry: false }) !== undefined;
if (hasSource && (!stamp || !entry || isNewer(join(root, "src"), stamp.mtimeMs))) {
  // The build reports on stderr, so `--json` output on stdout stays one document.
  const build = spawnSync(process.execPath, [join(root, "scripts", "build.mjs")], {
    stdio: ["ignore", 2, 2],
  });
  if (build.status !== 0) {
    process.stderr.write("error: compiling src/ to dist/ failed (node scripts/build.mjs)\n");
    process.exit(1);
  }
}
await import("../dist/cli/admin.js");

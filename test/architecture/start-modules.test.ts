import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { pathToFileURL } from "node:url";

const ROOT = new URL("../..", import.meta.url).pathname;

/**
 * Packages a request that does not use them must not pay for: each one is loaded on first use
 * (PDF reading and HTML conversion in their worker threads, OpenTelemetry when tracing is
 * configured, Swagger UI's files when /docs is opened), so they are not part of the module graph
 * the gateway loads to start (docs/performance.md, "Memory").
 */
const LOADED_ON_FIRST_USE = [
  "unpdf",
  "linkedom",
  "turndown",
  "@mozilla/readability",
  "@opentelemetry/",
  "swagger-ui-dist/swagger-ui",
];

test("architecture: starting the gateway loads no PDF, HTML, OpenTelemetry or API reference module", () => {
  const folder = mkdtempSync(join(tmpdir(), "start-modules-"));
  try {
    const log = join(folder, "resolved.txt");
    const hooks = join(folder, "hooks.mjs");
    // Every module resolved through import (how src/ loads these packages; a require() of
    // CommonJS is not seen on Node 20).
    writeFileSync(
      hooks,
      `import { appendFileSync } from "node:fs";
export async function resolve(specifier, context, next) {
  const resolved = await next(specifier, context);
  appendFileSync(${JSON.stringify(log)}, resolved.url + "\\n");
  return resolved;
}
`,
    );
    const register = join(folder, "register.mjs");
    writeFileSync(
      register,
      `import { register } from "node:module";\nregister(${JSON.stringify(pathToFileURL(hooks).href)});\n`,
    );
    const gateway = pathToFileURL(join(ROOT, "src/gateway.ts")).href;
    const child = spawnSync(
      process.execPath,
      [
        "--import",
        register,
        "--import",
        "tsx",
        "--input-type=module",
        "-e",
        `await import(${JSON.stringify(gateway)});`,
      ],
      { cwd: ROOT, encoding: "utf8", timeout: 120_000 },
    );
    assert.equal(child.status, 0, child.stderr);
    const resolved = readFileSync(log, "utf8").split("\n");
    assert.ok(
      resolved.some((url) => url.includes("/node_modules/@electric-sql/pglite/")),
      "the hook saw the start's packages",
    );
    const early = resolved.filter((url) =>
      LOADED_ON_FIRST_USE.some((name) => url.includes(`/node_modules/${name}`)),
    );
    assert.deepEqual(early, []);
  } finally {
    rmSync(folder, { recursive: true, force: true });
  }
});

import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { test } from "node:test";
import { fileURLToPath } from "node:url";

const LOGGER = fileURLToPath(new URL("./logger.ts", import.meta.url));

/** Runs `body` in a child with `createLogger` imported; resolves with its stdout lines as they came. */
function runChild(body: string, onLine?: (line: string, child: ReturnType<typeof spawn>) => void) {
  const child = spawn(
    process.execPath,
    [
      "--import",
      "tsx",
      "--input-type=module",
      "-e",
      `import { createLogger } from ${JSON.stringify(LOGGER)};\n${body}`,
    ],
    { stdio: ["ignore", "pipe", "inherit"] },
  );
  let buffered = "";
  const lines: string[] = [];
  child.stdout!.setEncoding("utf8").on("data", (chunk: string) => {
    buffered += chunk;
    let newline = buffered.indexOf("\n");
    while (newline !== -1) {
      const line = buffered.slice(0, newline);
      buffered = buffered.slice(newline + 1);
      lines.push(line);
      onLine?.(line, child);
      newline = buffered.indexOf("\n");
    }
  });
  return new Promise<{ lines: string[]; code: number | null }>((resolve) =>
    child.once("close", (code) => resolve({ lines, code })),
  );
}

test("stdout lines gathered in a batch are all written when the process exits, even by process.exit", async () => {
  const { lines, code } = await runChild(
    'const log = createLogger("info"); for (let i = 0; i < 50; i++) log.info({ i }, "line"); process.exit(7);',
  );
  assert.equal(code, 7);
  assert.deepEqual(
    lines.map((line) => JSON.parse(line).i),
    Array.from({ length: 50 }, (_, i) => i),
  );
});

test("a quiet process's line shows on stdout promptly, without waiting for a batch to fill or the process to end", async () => {
  let shownAfterMs: number | undefined;
  const { lines } = await runChild(
    'const log = createLogger("info"); log.info({ loggedAt: Date.now() }, "ready"); setTimeout(() => {}, 20000);',
    (line, child) => {
      // From the log call, not the child's start (which a loaded machine can make take seconds).
      shownAfterMs = Date.now() - JSON.parse(line).loggedAt;
      child.kill();
    },
  );
  assert.equal(JSON.parse(lines[0]).msg, "ready");
  // Well before the child's own 20 s end: the periodic flush wrote it.
  assert.ok(shownAfterMs !== undefined && shownAfterMs < 4000, `shown after ${shownAfterMs} ms`);
});

test("secrets in a logged object are redacted", async () => {
  const { lines } = await runChild(
    'createLogger("info").info({ headers: { authorization: "Bearer sk-secret" }, apiKey: "sk-2" }, "x");',
  );
  assert.doesNotMatch(lines.join("\n"), /sk-secret|sk-2/);
  assert.equal(JSON.parse(lines[0]).apiKey, "[redacted]");
});

test("an info line writer writes one JSON line on the logger's destination, and nothing when info is off", async () => {
  const { PassThrough } = await import("node:stream");
  const { createInfoLineWriter, createLogger } = await import("./logger.js");
  const read = (level: string) => {
    const destination = new PassThrough();
    const chunks: string[] = [];
    destination.on("data", (chunk: Buffer) => chunks.push(chunk.toString("utf8")));
    const write = createInfoLineWriter(createLogger(level, destination), (item: object) =>
      JSON.stringify(item),
    );
    write({ level: 30, time: 1, msg: "request", requestId: "gen_1", status: 200 });
    // Handed over within the flush interval.
    return new Promise<string>((resolve) => setTimeout(() => resolve(chunks.join("")), 300));
  };
  const line = { level: 30, time: 1, msg: "request", requestId: "gen_1", status: 200 };
  assert.deepEqual(JSON.parse(await read("info")), line);
  assert.equal(await read("warn"), "");
});

test("info lines still gathered by their writer reach stdout when the process exits, after the lines before them", async () => {
  const { lines, code } = await runChild(
    [
      `import { createInfoLineWriter } from ${JSON.stringify(LOGGER)};`,
      'const log = createLogger("info"); const write = createInfoLineWriter(log, JSON.stringify);',
      'log.info("first"); for (let i = 0; i < 5; i++) write({ level: 30, time: 1, msg: "request", i }); process.exit(0);',
    ].join("\n"),
  );
  assert.equal(code, 0);
  assert.deepEqual(
    lines.map((line) => JSON.parse(line).i ?? JSON.parse(line).msg),
    ["first", 0, 1, 2, 3, 4],
  );
});

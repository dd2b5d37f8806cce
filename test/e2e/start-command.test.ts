/**
 * `npm start` as a user runs it: a real process on embedded defaults, the first-start workspace and
 * key, the admin CLI working against the running gateway, graceful SIGTERM, and no second bootstrap.
 */
import assert from "node:assert/strict";
import { type ChildProcessWithoutNullStreams, spawn, spawnSync } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import OpenAI from "openai";
import { stringify } from "yaml";
import { startFakeOpenAiUpstream } from "../helpers/fake-openai-upstream.js";
import { createTestConfigFile, TEST_MODEL } from "../helpers/test-gateway.js";

const root = new URL("../..", import.meta.url).pathname;

interface StartedProcess {
  child: ChildProcessWithoutNullStreams;
  url: string;
  output: () => string;
}

/** `npm start` is `node scripts/build.mjs && node dist/main.js`; npm itself is left out of the way of signals. */
async function startMain(env: NodeJS.ProcessEnv): Promise<StartedProcess> {
  const build = spawnSync(process.execPath, ["scripts/build.mjs"], { cwd: root, encoding: "utf8" });
  assert.equal(build.status, 0, `build failed: ${build.stderr}`);
  const child = spawn(process.execPath, ["dist/main.js"], { cwd: root, env });
  let output = "";
  child.stdout.on("data", (chunk) => {
    output += chunk;
  });
  child.stderr.on("data", (chunk) => {
    output += chunk;
  });
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`gateway did not start:\n${output}`)), 30_000);
    const check = () => {
      const match = /Gateway listening on (http:\/\/\S+) /.exec(output);
      if (match) {
        clearTimeout(timer);
        resolve(match[1]);
      }
    };
    child.stdout.on("data", check);
    child.once("exit", (code) => reject(new Error(`gateway exited with ${code}:\n${output}`)));
  });
  return { child, url, output: () => output };
}

async function stop(started: StartedProcess): Promise<string> {
  const exited = new Promise<string>((resolve) =>
    started.child.once("exit", (code, signal) => resolve(`code=${code} signal=${signal}`)),
  );
  started.child.kill("SIGTERM");
  return exited;
}

function runCli(args: string[], env: NodeJS.ProcessEnv) {
  const result = spawnSync(process.execPath, ["--import", "tsx", "src/cli/admin.ts", ...args], {
    cwd: root,
    env,
    encoding: "utf8",
    timeout: 30_000,
  });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

test("npm start: first-start key, admin CLI against the running gateway, SIGTERM, no second bootstrap", async () => {
  const upstream = await startFakeOpenAiUpstream();
  const dir = mkdtempSync(join(tmpdir(), "gw-start-"));
  const configPath = join(dir, "gateway.yaml");
  writeFileSync(configPath, stringify(createTestConfigFile(upstream.baseUrl)));
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    PORT: "0",
    GATEWAY_CONFIG: configPath,
    GATEWAY_DATA_DIR: join(dir, "data"),
    FAKE_UPSTREAM_KEY: "sk-upstream",
    LOG_LEVEL: "warn",
    DATABASE_URL: "",
    REDIS_URL: "",
    INTERNAL_SHARED_SECRET: "",
    // The compiled worker entry (dist/storage/pglite-worker-main.js), whatever this machine's CPU count.
    GATEWAY_PGLITE_THREAD: "worker",
  };
  try {
    const first = await startMain(env);
    const announcement = first.output();
    const key = /\n {2}(hi-[0-9A-Za-z]+)\n/.exec(announcement)?.[1];
    const workspaceId = /Created workspace "default" \((\S+)\)/.exec(announcement)?.[1];
    assert.ok(key, `the first start prints a key:\n${announcement}`);
    assert.ok(workspaceId);
    assert.match(announcement, /curl -s http:\/\/127\.0\.0\.1:\d+\/api\/v1\/chat\/completions/);
    assert.equal(announcement.includes("HOST_PORT"), false);

    const client = new OpenAI({ apiKey: key, baseURL: `${first.url}/api/v1`, maxRetries: 0 });
    const completion = await client.chat.completions.create({
      model: TEST_MODEL,
      messages: [{ role: "user", content: "hi" }],
    });
    assert.ok(completion.choices[0].message.content);

    const cliEnv = { ...env, GATEWAY_URL: first.url };
    const listed = runCli(["key", "list", "--workspace", workspaceId, "--json"], cliEnv);
    assert.equal(listed.status, 0, listed.stderr);
    const keys = (
      JSON.parse(listed.stdout) as { data: Array<{ id: string; display: string; status: string }> }
    ).data;
    assert.equal(keys.length, 1);
    assert.equal(keys[0].display, `hi-…${key.slice(-4)}`);
    assert.equal(listed.stdout.includes(key), false, "key material is never shown again");

    const created = runCli(["workspace", "create", "--name", "acme", "--credits", "2.5", "--json"], cliEnv);
    assert.equal(created.status, 0, created.stderr);
    assert.equal(
      (JSON.parse(created.stdout) as { workspace: { balance_micro_usd: string } }).workspace
        .balance_micro_usd,
      "2500000",
    );

    const disabled = runCli(["key", "disable", keys[0].id], cliEnv);
    assert.equal(disabled.status, 0, disabled.stderr);
    await assert.rejects(
      client.chat.completions.create({ model: TEST_MODEL, messages: [{ role: "user", content: "hi" }] }),
      OpenAI.AuthenticationError,
      "a disabled key fails on the very next request",
    );
    const bad = runCli(["workspace", "credit", workspaceId, "abc"], cliEnv);
    assert.equal(bad.status, 1);
    assert.match(bad.stderr, /USD/);

    assert.equal(await stop(first), "code=0 signal=null", `SIGTERM shuts down cleanly:\n${first.output()}`);

    const second = await startMain(env);
    assert.equal(second.output().includes("Created workspace"), false, "no second bootstrap");
    assert.equal(await stop(second), "code=0 signal=null");
  } finally {
    await upstream.close();
  }
});

/**
 * `npm start` as a user runs it: a real process on embedded defaults, the first-start workspace and
 * key, the admin CLI working against the running gateway, graceful SIGTERM, and no second bootstrap.
 */
import assert from "node:assert/strict";
import { type ChildProcessWithoutNullStreams, spawn, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, writeFileSync } from "node:fs";
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
  // A gateway that did not start is ended, or its open pipes would hold the test file until its timeout.
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`gateway did not start within 90 s:\n${output}`));
    }, 90_000);
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
  running.add(child);
  child.once("exit", () => running.delete(child));
  return { child, url, output: () => output };
}

/** Gateways still running when a test fails: ended in its `finally`, so the file can end. */
const running = new Set<ChildProcessWithoutNullStreams>();

async function stop(started: StartedProcess): Promise<string> {
  const exited = new Promise<string>((resolve) =>
    started.child.once("exit", (code, signal) => resolve(`code=${code} signal=${signal}`)),
  );
  started.child.kill("SIGTERM");
  return exited;
}

/** `npm run admin --` is `node bin/gateway-admin.js`. */
function runCli(args: string[], env: NodeJS.ProcessEnv) {
  const result = spawnSync(process.execPath, ["bin/gateway-admin.js", ...args], {
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
  // Beside the fake upstream's provider, one whose key variable is unset and the model it strands.
  const config = createTestConfigFile(upstream.baseUrl);
  config.providers.push({ ...config.providers[0], id: "keyless", api_key_env: "UNSET_PROVIDER_KEY" });
  config.models.push({
    ...config.models[0],
    slug: "test/stranded-model",
    pricing: { prompt: "0", completion: "0", cached_prompt: "0" },
    routes: [{ provider: "keyless", model: "m" }],
  });
  writeFileSync(configPath, stringify(config));
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
    // The compiled worker entry (dist/storage/pglite/pglite-worker-main.js), whatever this machine's CPU count.
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
    assert.match(
      announcement,
      /Gateway listening on (http:\/\/\S+) \(web console: \1\/console, API reference: \1\/docs\)/,
      "the banner names the console and the API reference",
    );
    assert.match(
      announcement,
      /No API key for provider "keyless" \(UNSET_PROVIDER_KEY is unset\): 1 model cannot answer: test\/stranded-model\./,
    );

    // The example's model answers (the free stranded model is cheaper, but has no key).
    const exampleModel = /"model":"([^"]+)"/.exec(announcement)?.[1];
    assert.equal(exampleModel, TEST_MODEL);
    const client = new OpenAI({ apiKey: key, baseURL: `${first.url}/api/v1`, maxRetries: 0 });
    const completion = await client.chat.completions.create({
      model: exampleModel,
      messages: [{ role: "user", content: "hi" }],
    });
    assert.ok(completion.choices[0].message.content);

    // With only the data folder (no GATEWAY_URL; PORT=0 probes nothing): the CLI finds the gateway
    // holding the folder at the address it wrote there, and says so.
    const found = runCli(["workspace", "list", "--json"], env);
    assert.equal(found.status, 0, found.stderr);
    assert.ok(
      found.stderr.includes(
        `gateway-admin: using the gateway at ${first.url}, which holds ${env.GATEWAY_DATA_DIR}`,
      ),
      found.stderr,
    );
    assert.equal((JSON.parse(found.stdout) as { data: unknown[] }).data.length, 1);

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
    assert.equal(
      existsSync(join(dir, "data", "gateway-url")),
      false,
      "a stopped gateway leaves no address for the CLI to try",
    );

    const second = await startMain(env);
    assert.equal(second.output().includes("Created workspace"), false, "no second bootstrap");
    assert.ok(
      second.output().includes(`npm run admin -- key create --workspace ${workspaceId}\n`),
      `a later start says how to mint a key:\n${second.output()}`,
    );
    assert.match(second.output(), /No API key for provider "keyless"/);
    assert.equal(await stop(second), "code=0 signal=null");
  } finally {
    for (const child of running) child.kill("SIGKILL");
    await upstream.close();
  }
});

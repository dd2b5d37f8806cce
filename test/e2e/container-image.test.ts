/**
 * The container recipe, as far as it runs without Docker. The image's build steps are read from
 * the Dockerfile and run in a scratch folder: its COPY lines copy the same files, its RUN lines
 * run (the production-only `npm ci` with `--prefer-offline`, so the npm cache that the project's
 * own install filled serves it and the registry is asked only for what is missing), and the final
 * stage's tree alone — no src/, no dev dependency — starts with `node dist/main.js`, answers a
 * chat request against a loopback fake upstream, passes the image's HEALTHCHECK command and
 * serves the admin CLI. compose.yaml and its load balancer config are checked for what the
 * deployment docs promise, and validated by `docker compose config` where that client exists.
 */
import assert from "node:assert/strict";
import { type ChildProcess, execFile, spawn, spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { cp, mkdir, readFile, rename, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { test } from "node:test";
import { promisify } from "node:util";
import { parse as parseYaml, stringify } from "yaml";
import { DEFAULT_REPLY_TEXT, startFakeOpenAiUpstream } from "../helpers/fake-openai-upstream.js";
import { createTempDir } from "../helpers/storage-modes.js";
import { createTestConfigFile, TEST_MODEL } from "../helpers/test-gateway.js";

const ROOT = new URL("../../", import.meta.url).pathname;
const run = promisify(execFile);

interface Stage {
  from: string;
  name?: string;
  /** Every instruction after FROM, continuation lines joined. */
  instructions: Array<{ keyword: string; args: string }>;
}

function readDockerfile(text: string): Stage[] {
  const stages: Stage[] = [];
  const lines = text.replace(/\\\n\s*/g, "").split("\n");
  for (const line of lines) {
    const match = /^([A-Z]+)\s+(.*)$/.exec(line.trim());
    if (!match || line.trim().startsWith("#")) continue;
    const [, keyword, args] = match;
    if (keyword === "FROM") {
      const [from, , name] = args.split(/\s+/);
      stages.push({ from, name, instructions: [] });
    } else stages.at(-1)?.instructions.push({ keyword, args });
  }
  return stages;
}

/** `COPY [--from=x] a b dest`: the sources and the destination (relative to WORKDIR /app). */
function readCopy(args: string): { from?: string; sources: string[]; destination: string } {
  const words = args.split(/\s+/);
  const from = words[0].startsWith("--from=") ? words.shift()!.slice("--from=".length) : undefined;
  const destination = words.pop()!;
  return { from, sources: words, destination };
}

test("the image's build steps, run in a scratch folder, give a tree that serves on its own", async (t) => {
  const stages = readDockerfile(await readFile(join(ROOT, "Dockerfile"), "utf8"));
  assert.equal(stages.length, 2, "multi-stage: build, then the runtime image");
  const [build, runtime] = stages;
  const runtimeInstructions = runtime.instructions.map((each) => `${each.keyword} ${each.args}`);
  assert.ok(runtimeInstructions.includes("USER node"), "runs as the unprivileged node user");
  const healthcheck = runtime.instructions.find((each) => each.keyword === "HEALTHCHECK");
  assert.ok(healthcheck?.args.includes("/healthz"), "a health check on /healthz");
  const cmd = runtime.instructions.find((each) => each.keyword === "CMD");
  assert.deepEqual(JSON.parse(cmd?.args ?? "null"), ["node", "dist/main.js"]);

  const scratch = await createTempDir("gw-image-");
  t.after(() => scratch.cleanup());
  const buildDir = join(scratch.path, "build");
  const imageDir = join(scratch.path, "image");
  await mkdir(buildDir);
  await mkdir(imageDir);

  // The build stage: its COPY lines from the project, its RUN lines in order.
  for (const { keyword, args } of build.instructions) {
    if (keyword === "COPY") {
      const { sources, destination } = readCopy(args);
      for (const source of sources) {
        const target = destination.endsWith("/")
          ? join(buildDir, destination, source)
          : join(buildDir, destination);
        await cp(join(ROOT, source), target, { recursive: true });
      }
    } else if (keyword === "RUN") {
      const command = args.startsWith("npm ci ") ? `${args} --prefer-offline` : args;
      const started = performance.now();
      await run("sh", ["-c", command], { cwd: buildDir, timeout: 150_000, maxBuffer: 16 * 1024 * 1024 });
      t.diagnostic(`${command}: ${Math.round(performance.now() - started)} ms`);
    }
  }
  // The runtime stage: only what it copies, from the build stage or from the project.
  for (const { keyword, args } of runtime.instructions) {
    if (keyword !== "COPY") continue;
    const { from, sources, destination } = readCopy(args);
    for (const source of sources) {
      const name = source.replace(/^\/app\//, "");
      const target =
        destination === "./" ? join(imageDir, name.split("/").at(-1)!) : join(imageDir, destination);
      if (from === "build") await rename(join(buildDir, name), target);
      else await cp(join(ROOT, source), target, { recursive: true });
    }
  }
  assert.equal(existsSync(join(imageDir, "src")), false, "no TypeScript source in the image");
  for (const devDependency of ["typescript", "@biomejs/biome", "openai", "playwright-core"]) {
    assert.equal(
      existsSync(join(imageDir, "node_modules", devDependency)),
      false,
      `${devDependency} left out`,
    );
  }

  const upstream = await startFakeOpenAiUpstream();
  t.after(() => upstream.close());
  const configPath = join(scratch.path, "gateway.yaml");
  await writeFile(configPath, stringify(createTestConfigFile(upstream.baseUrl)));
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    NODE_ENV: "production",
    // The image listens on 0.0.0.0:8080; here on loopback, on a free port.
    HOST: "127.0.0.1",
    PORT: "0",
    GATEWAY_DATA_DIR: join(scratch.path, "data"),
    GATEWAY_CONFIG: configPath,
    FAKE_UPSTREAM_KEY: "sk-upstream",
    LOG_LEVEL: "warn",
  };
  const gateway = spawn(process.execPath, ["dist/main.js"], { cwd: imageDir, env });
  t.after(() => {
    if (gateway.exitCode === null) gateway.kill("SIGKILL");
  });
  const output = await waitForListening(gateway);
  const url = /Gateway listening on (http:\/\/\S+) /.exec(output)![1];
  const key = /\n {2}(hi-[0-9A-Za-z]+)\n/.exec(output)?.[1];
  assert.ok(key, output);

  const response = await fetch(`${url}/api/v1/chat/completions`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: JSON.stringify({ model: TEST_MODEL, messages: [{ role: "user", content: "Hello!" }] }),
  });
  assert.equal(response.status, 200, await response.clone().text());
  const completion = (await response.json()) as { choices: Array<{ message: { content: string } }> };
  assert.equal(completion.choices[0].message.content, DEFAULT_REPLY_TEXT);

  // The web pages and the reference's renderer come from the image's tree too.
  for (const path of ["/console", "/docs", "/openapi.json"]) {
    const page = await fetch(`${url}${path}`);
    assert.equal(page.status, 200, path);
    await page.arrayBuffer();
  }
  const renderer = /src="(\/docs\/swagger-ui\/[^"]+\.js)"/.exec(
    await (await fetch(`${url}/docs`)).text(),
  )?.[1];
  assert.ok(renderer);
  assert.equal((await fetch(`${url}${renderer}`)).status, 200, renderer);

  // The image's HEALTHCHECK command, as Docker would run it.
  const [program, ...healthArgs] = JSON.parse(healthcheck!.args.slice(healthcheck!.args.indexOf("CMD") + 3));
  assert.equal(program, "node");
  const port = new URL(url).port;
  const health = spawnSync(process.execPath, healthArgs, { env: { PORT: port }, timeout: 10_000 });
  assert.equal(health.status, 0, "the health check passes against the running gateway");

  // The admin CLI of the image (no src/: nothing to compile) finds the gateway by its data folder.
  const cli = spawnSync(process.execPath, ["bin/gateway-admin.js", "workspace", "list", "--json"], {
    cwd: imageDir,
    env: { PATH: process.env.PATH, GATEWAY_DATA_DIR: env.GATEWAY_DATA_DIR, PORT: "1" },
    encoding: "utf8",
    timeout: 30_000,
  });
  assert.equal(cli.status, 0, cli.stderr);
  assert.match(cli.stderr, /gateway-admin: using the gateway at http:\/\/127\.0\.0\.1:\d+, which holds /);

  const exited = new Promise<number | null>((resolve) => gateway.once("exit", resolve));
  gateway.kill("SIGTERM");
  assert.equal(await exited, 0, "SIGTERM drains and exits 0");
});

test("compose.yaml: two gateways on PostgreSQL and Redis behind a readiness-checked load balancer", async (t) => {
  const compose = parseYaml(await readFile(join(ROOT, "compose.yaml"), "utf8"), { merge: true }) as {
    services: Record<
      string,
      { image?: string; build?: unknown; environment?: Record<string, string>; volumes?: string[] }
    >;
  };
  const gateways = Object.entries(compose.services).filter(([, service]) => service.build !== undefined);
  assert.deepEqual(
    gateways.map(([name]) => name),
    ["gateway-1", "gateway-2"],
  );
  for (const [name, service] of gateways) {
    assert.match(service.environment?.DATABASE_URL ?? "", /@postgres:5432\//, name);
    assert.match(service.environment?.REDIS_URL ?? "", /^redis:\/\/redis:6379/, name);
    assert.ok("REDIS_KEY_PREFIX" in (service.environment ?? {}), name);
    assert.ok("INTERNAL_SHARED_SECRET" in (service.environment ?? {}), name);
  }
  assert.match(compose.services.postgres.image ?? "", /^postgres:/);
  assert.match(compose.services.redis.image ?? "", /^redis:/);
  const balancer = compose.services["load-balancer"];
  const mounted = balancer.volumes?.[0].split(":")[0] ?? "";
  const balancerConfig = await readFile(join(ROOT, mounted), "utf8");
  for (const server of ["gateway-1:8080", "gateway-2:8080"])
    assert.ok(balancerConfig.includes(server), server);
  assert.match(balancerConfig, /option httpchk GET \/readyz/);
  assert.match(balancerConfig, /timeout tunnel/, "WebSocket upgrades have their own timeout");

  const client = spawnSync("docker", ["compose", "version"], { encoding: "utf8" });
  if (client.status !== 0) {
    t.skip("`docker compose` is not installed here: compose.yaml checked by the assertions above only");
    return;
  }
  const validated = spawnSync("docker", ["compose", "-f", "compose.yaml", "config", "--quiet"], {
    cwd: ROOT,
    env: Object.assign({}, process.env, { INTERNAL_SHARED_SECRET: "compose-config-check" }),
    encoding: "utf8",
  });
  assert.equal(validated.status, 0, validated.stderr);
});

async function waitForListening(child: ChildProcess): Promise<string> {
  let output = "";
  return new Promise<string>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`the gateway did not start within 90 s:\n${output}`)),
      90_000,
    );
    const collect = (chunk: Buffer) => {
      output += chunk;
      if (/Gateway listening on http:\/\/\S+ /.test(output)) {
        clearTimeout(timer);
        resolve(output);
      }
    };
    child.stdout?.on("data", collect);
    child.stderr?.on("data", collect);
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`the gateway exited with ${code}:\n${output}`));
    });
  });
}

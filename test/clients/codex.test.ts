/**
 * Codex CLI, the released binary at a pinned version (scripts/install-tools.sh), run as a user
 * would: `codex exec` with a custom model provider pointing at the gateway (wire_api `responses`)
 * at its default features, update checks, analytics and telemetry off, plugin sync off (it would
 * resolve github.com at every start), in a network namespace that has only loopback. Against each
 * provider kind's fake upstream it must finish a turn in which it runs a shell command the model
 * asks for and answers from its output, over HTTP and over the Responses WebSocket mode, and the
 * gateway must answer none of its requests with a 4xx (wire and request log).
 */
import assert from "node:assert/strict";
import { mkdir, mkdtemp, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import type { ProviderKind } from "../../src/catalog/types.js";
import { CODEX_BINARY, CODEX_PATH_DIR, CODEX_VERSION, missingCli } from "../helpers/agent-clis.js";
import { TOOL_ANSWER_PREFIX } from "../helpers/agent-model.js";
import { recordingClientFixtures, writeClientRecordings } from "../helpers/client-fixtures.js";
import { type ClientRun, type ClientSuite, refusals, startClientSuite } from "../helpers/client-suite.js";
import { conformanceModel, PROVIDER_KINDS } from "../helpers/conformance-gateway.js";

const SECRET = "the secret is 4217";
const TRANSPORTS = ["http", "websocket"] as const;

/** Tests that fail for a known reason, by test name (none today). Remove an entry when its test passes. */
const TODO: Record<string, string> = {};

const skip = missingCli(CODEX_BINARY, `Codex ${CODEX_VERSION}`);

describe("Codex against the gateway", { skip }, () => {
  let suite: ClientSuite;
  before(async () => {
    suite = await startClientSuite();
  });
  after(() => suite?.close());

  async function runCodex(kind: ProviderKind, transport: (typeof TRANSPORTS)[number]): Promise<ClientRun> {
    const home = await mkdtemp(join(suite.scratch, "codex-"));
    const codexHome = join(home, ".codex");
    await mkdir(codexHome);
    await writeFile(join(home, "notes.txt"), `${SECRET}\n`);
    await writeFile(
      join(codexHome, "config.toml"),
      [
        'model_provider = "hi"',
        `model = "${conformanceModel(kind)}"`,
        "check_for_update_on_startup = false",
        "[analytics]",
        "enabled = false",
        "[otel]",
        'exporter = "none"',
        "[model_providers.hi]",
        'name = "hi-gateway"',
        `base_url = "${suite.clientUrl}/api/v1"`,
        'env_key = "HI_GATEWAY_KEY"',
        'wire_api = "responses"',
        `supports_websockets = ${transport === "websocket"}`,
        "",
      ].join("\n"),
    );
    const prompt = `Read my notes. CALL exec_command {"cmd":"cat ${join(home, "notes.txt")}"}`;
    return suite.run({
      command: CODEX_BINARY,
      args: ["exec", "--skip-git-repo-check", "-c", "features.plugins=false", prompt],
      cwd: home,
      env: {
        PATH: `${CODEX_PATH_DIR}:${process.env.PATH}`,
        HOME: home,
        CODEX_HOME: codexHome,
        HI_GATEWAY_KEY: suite.gateway.apiKey,
      },
    });
  }

  for (const transport of TRANSPORTS) {
    for (const kind of PROVIDER_KINDS) {
      const name = `codex exec ${transport} × ${kind}`;
      describe(name, () => {
        let run: ClientRun;
        before(async () => {
          run = await runCodex(kind, transport);
          if (recordingClientFixtures && kind === "openai-responses" && transport === "http") {
            writeClientRecordings(
              "codex-exec",
              `codex ${CODEX_VERSION}, exec with a tool turn`,
              run.exchanges,
            );
          }
        });

        const check = (label: string, body: () => void) =>
          it(label, { todo: TODO[`${name} › ${label}`] }, body);

        check("completes with the model's answer", () => {
          const diagnosis = `exit ${run.code}${run.timedOut ? " (timed out)" : ""}\n${run.stderr.slice(-2000)}`;
          assert.equal(run.code, 0, diagnosis);
          assert.ok(
            run.stdout.includes(TOOL_ANSWER_PREFIX),
            `the model answered from the tool's result\n${diagnosis}`,
          );
          assert.ok(run.stdout.includes(SECRET), `the command's output reached the model\n${diagnosis}`);
        });

        check("the gateway answered no 4xx", () => {
          assert.ok(run.exchanges.length > 0, "the CLI reached the gateway");
          assert.deepEqual(refusals(run), [], "requests the gateway refused");
          const upgrades = run.exchanges.filter((exchange) => exchange.upgrade);
          if (transport === "websocket") {
            assert.deepEqual(
              upgrades.map((exchange) => exchange.status),
              [101],
              "one WebSocket upgrade, accepted at once (no failed attempts, no fallback)",
            );
            assert.ok(
              run.requestLines.some((line) => line.method === "WS" && line.outcome === "ok"),
              "turns served over the socket",
            );
            assert.equal(
              run.exchanges.filter((exchange) => exchange.method === "POST").length,
              0,
              "no fallback to HTTP",
            );
          } else {
            assert.equal(upgrades.length, 0, "no WebSocket attempt with supports_websockets = false");
          }
          assert.ok(
            run.requestLines.every((line) => line.client === `codex_exec/${CODEX_VERSION}`),
            "the request log names the client",
          );
        });
      });
    }
  }
});

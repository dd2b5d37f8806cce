/**
 * Claude Code, the released CLI at a pinned version (scripts/install-tools.sh), run as a user would:
 * `claude -p` with `--output-format stream-json`, pointed at the gateway through
 * ANTHROPIC_BASE_URL and ANTHROPIC_API_KEY, telemetry, update checks and other traffic off, in a
 * network namespace that has only loopback. Against each provider kind's fake upstream it must
 * finish a text turn and a tool-using turn (its Read tool on a file the model names), and the
 * gateway must answer none of its requests with a 4xx (wire and request log).
 */
import assert from "node:assert/strict";
import { mkdir, mkdtemp, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import type { ProviderKind } from "../../src/catalog/types.js";
import { CLAUDE_CODE_BINARY, CLAUDE_CODE_VERSION, missingCli } from "../helpers/agent-clis.js";
import { AGENT_MODEL_TEXT, TOOL_ANSWER_PREFIX } from "../helpers/agent-model.js";
import { recordingClientFixtures, writeClientRecordings } from "../helpers/client-fixtures.js";
import { type ClientRun, type ClientSuite, refusals, startClientSuite } from "../helpers/client-suite.js";
import { conformanceModel, PROVIDER_KINDS } from "../helpers/conformance-gateway.js";

const SECRET = "the secret is 4217";

/** Checks that fail for a known reason, by test name (none today). Remove an entry when its test passes. */
const TODO: Record<string, string> = {};

const skip = missingCli(CLAUDE_CODE_BINARY, `Claude Code ${CLAUDE_CODE_VERSION}`);

interface StreamEvent {
  type: string;
  subtype?: string;
  is_error?: boolean;
  result?: string;
  // biome-ignore lint/suspicious/noExplicitAny: stream-json events are read field by field.
  message?: any;
}

function events(run: ClientRun): StreamEvent[] {
  return run.stdout
    .split("\n")
    .filter((line) => line.startsWith("{"))
    .map((line) => JSON.parse(line) as StreamEvent);
}

describe("Claude Code against the gateway", { skip }, () => {
  let suite: ClientSuite;
  before(async () => {
    suite = await startClientSuite();
  });
  after(() => suite?.close());

  async function runClaude(kind: ProviderKind, prompt: string): Promise<{ run: ClientRun; home: string }> {
    const home = await mkdtemp(join(suite.scratch, "claude-"));
    await mkdir(join(home, ".claude"));
    await writeFile(join(home, "notes.txt"), `${SECRET}\n`);
    const run = await suite.run({
      command: CLAUDE_CODE_BINARY,
      args: [
        "-p",
        prompt.replace("NOTES", join(home, "notes.txt")),
        "--model",
        conformanceModel(kind),
        "--output-format",
        "stream-json",
        "--verbose",
      ],
      cwd: home,
      env: {
        PATH: process.env.PATH,
        HOME: home,
        CLAUDE_CONFIG_DIR: join(home, ".claude"),
        ANTHROPIC_BASE_URL: `${suite.clientUrl}/api`,
        ANTHROPIC_API_KEY: suite.gateway.apiKey,
        DISABLE_TELEMETRY: "1",
        DISABLE_AUTOUPDATER: "1",
        DISABLE_ERROR_REPORTING: "1",
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
      },
    });
    return { run, home };
  }

  const turns = [
    { turn: "text", prompt: "Say hello.", answer: AGENT_MODEL_TEXT },
    { turn: "tool", prompt: 'Read my notes. CALL Read {"file_path":"NOTES"}', answer: SECRET },
  ];
  for (const kind of PROVIDER_KINDS) {
    for (const { turn, prompt, answer } of turns) {
      const name = `claude-code ${turn} turn × ${kind}`;
      describe(name, () => {
        let run: ClientRun;
        before(async () => {
          ({ run } = await runClaude(kind, prompt));
          if (recordingClientFixtures && kind === "anthropic") {
            writeClientRecordings(
              `claude-code-${turn}`,
              `claude-code ${CLAUDE_CODE_VERSION}, ${turn} turn`,
              run.exchanges,
            );
          }
        });

        it("completes with the model's answer", () => {
          const diagnosis = `exit ${run.code}${run.timedOut ? " (timed out)" : ""}\n${run.stderr.slice(-2000)}`;
          assert.equal(run.code, 0, diagnosis);
          const result = events(run).find((event) => event.type === "result");
          assert.ok(result, `a result event in the stream-json output\n${diagnosis}`);
          assert.equal(result.subtype, "success");
          assert.equal(result.is_error, false);
          assert.ok(
            result.result?.includes(answer),
            `the answer holds ${JSON.stringify(answer)}: ${result.result}`,
          );
          if (turn === "tool") {
            assert.ok(
              result.result?.startsWith(TOOL_ANSWER_PREFIX),
              "the model answered from the tool's result",
            );
            const calls = events(run)
              .filter((event) => event.type === "assistant")
              .flatMap((event) => event.message?.content ?? [])
              .filter((block: { type: string }) => block.type === "tool_use");
            assert.deepEqual(
              calls.map((call: { name: string }) => call.name),
              ["Read"],
              "Claude Code ran its Read tool once",
            );
          }
        });

        it("the gateway answered no 4xx", { todo: TODO[`${name} › the gateway answered no 4xx`] }, () => {
          assert.ok(run.exchanges.length > 0, "the CLI reached the gateway");
          assert.deepEqual(refusals(run), [], "requests the gateway refused");
          assert.ok(
            run.requestLines.every((line) => line.client === `claude-cli/${CLAUDE_CODE_VERSION}`),
            "the request log names the client",
          );
        });
      });
    }
  }
});

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
import { CLAUDE_CODE_BINARY, CLAUDE_CODE_VERSION, missingCli } from "../helpers/agent-clis.js";
import { AGENT_MODEL_TEXT, TOOL_ANSWER_PREFIX } from "../helpers/agent-model.js";
import { recordingClientFixtures, writeClientRecordings } from "../helpers/client-fixtures.js";
import {
  CLAUDE_CODE_MODEL_NAMES,
  type ClientRun,
  type ClientSuite,
  refusals,
  startClientSuite,
} from "../helpers/client-suite.js";
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

  /** `model`: a `--model` value, or undefined for Claude Code's own default. */
  async function runClaude(
    model: string | undefined,
    prompt: string,
  ): Promise<{ run: ClientRun; home: string }> {
    const home = await mkdtemp(join(suite.scratch, "claude-"));
    await mkdir(join(home, ".claude"));
    await writeFile(join(home, "notes.txt"), `${SECRET}\n`);
    const run = await suite.run({
      command: CLAUDE_CODE_BINARY,
      args: [
        "-p",
        prompt.replace("NOTES", join(home, "notes.txt")),
        ...(model === undefined ? [] : ["--model", model]),
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
          ({ run } = await runClaude(conformanceModel(kind), prompt));
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
  // Claude Code's own model names: none given (its default), and its family picks. The suite's
  // catalog has its family models as the shipped one does (CLAUDE_CODE_MODEL_NAMES).
  const picks: Array<{ pick: string | undefined; slug: string }> = [
    { pick: undefined, slug: "anthropic/claude-opus-5.5" },
    { pick: "opus", slug: "anthropic/claude-opus-5.5" },
    { pick: "sonnet", slug: "anthropic/claude-sonnet-5.5" },
    { pick: "haiku", slug: "anthropic/claude-haiku-5.5" },
  ];
  for (const { pick, slug } of picks) {
    const family = CLAUDE_CODE_MODEL_NAMES.extraModels.find((model) => model.slug === slug)!;
    it(`claude-code ${pick === undefined ? "with no --model" : `--model ${pick}`}: its model name resolves to ${slug}`, async () => {
      const upstream = suite.gateway.upstreams[family.kind];
      const before = upstream.requests.length;
      const { run } = await runClaude(pick, "Say hello.");
      assert.equal(run.code, 0, `exit ${run.code}\n${run.stderr.slice(-2000)}`);
      assert.deepEqual(refusals(run), [], "requests the gateway refused");
      const sent = run.exchanges
        .filter(
          (exchange) =>
            exchange.path.startsWith("/api/v1/messages") && !exchange.path.includes("count_tokens"),
        )
        .map((exchange) => (JSON.parse(exchange.requestBody) as { model: string }).model);
      assert.ok(sent.length > 0, "Claude Code asked for an answer");
      const names = new Set<string>([slug, ...family.aliases, family.family.replace("claude-", "")]);
      assert.ok(
        sent.every((name) => names.has(name) || /haiku/.test(name)),
        `names sent: ${sent.join(", ")}`,
      );
      const served = events(run)
        .filter((event) => event.type === "assistant")
        .map((event) => event.message?.model);
      assert.ok(served.includes(slug), `the answers name the slug that served: ${served.join(", ")}`);
      assert.ok(upstream.requests.length > before, `the ${family.kind} route of ${slug} answered`);
    });
  }
});

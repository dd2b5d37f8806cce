/**
 * One gateway for the agent-CLI suite (test/clients): the conformance gateway (one model per
 * provider kind, each on its own fake upstream), every fake answering as {@link answerAsAgentModel},
 * the gateway's request log captured, and a {@link WireBridge} between the CLI and the gateway.
 * {@link ClientSuite.run} runs a CLI in a loopback-only network namespace when one can be made
 * (loopback-namespace.ts), so it reaches the gateway and nothing else.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Writable } from "node:stream";
import { answerAsAgentModel } from "./agent-model.js";
import { type ConformanceGateway, PROVIDER_KINDS, startConformanceGateway } from "./conformance-gateway.js";
import { type CliRun, loopbackNamespaceAvailable, runCli } from "./loopback-namespace.js";
import { type BridgedExchange, startWireBridge, type WireBridge } from "./wire-bridge.js";

export type LogLine = Record<string, unknown>;

class CapturedLog extends Writable {
  text = "";
  override _write(chunk: Buffer, _encoding: BufferEncoding, done: () => void): void {
    this.text += chunk.toString("utf8");
    done();
  }
  requestLines(): LogLine[] {
    return this.text
      .split("\n")
      .filter((line) => line.length > 0)
      .map((line) => JSON.parse(line) as LogLine)
      .filter((line) => line.msg === "request");
  }
}

export interface ClientRun extends CliRun {
  /** What went over the wire between the CLI and the gateway during this run. */
  exchanges: BridgedExchange[];
  /** The gateway's request log lines written during this run. */
  requestLines: LogLine[];
}

export interface ClientSuite {
  gateway: ConformanceGateway;
  /** The gateway's origin as the CLI reaches it. */
  clientUrl: string;
  /** Whether CLIs run in a loopback-only network namespace. */
  isolated: boolean;
  /** A scratch directory removed at close. */
  scratch: string;
  run(command: {
    command: string;
    args: string[];
    env: NodeJS.ProcessEnv;
    cwd: string;
    timeoutMs?: number;
  }): Promise<ClientRun>;
  close(): Promise<void>;
}

/**
 * The model names Claude Code sends by itself, as the shipped catalog has them: each of its family
 * models under its own id as an alias (`claude-opus-5-5`, sent with no `--model`), and the
 * operator's `opus` / `sonnet` / `haiku` for the newest of the family (config/gateway.yaml). Each
 * family is routed to another kind's fake, so the names are resolved whatever serves them.
 */
export const CLAUDE_CODE_MODEL_NAMES = {
  extraModels: [
    {
      slug: "anthropic/claude-opus-5.5",
      kind: "anthropic",
      aliases: ["claude-opus-5-5"],
      family: "claude-opus",
    },
    {
      slug: "anthropic/claude-sonnet-5.5",
      kind: "openai-responses",
      aliases: ["claude-sonnet-5-5"],
      family: "claude-sonnet",
    },
    {
      slug: "anthropic/claude-haiku-5.5",
      kind: "google",
      aliases: ["claude-haiku-5-5"],
      family: "claude-haiku",
    },
  ],
  aliases: {
    opus: { family: "claude-opus" },
    sonnet: { family: "claude-sonnet" },
    haiku: { family: "claude-haiku" },
  },
} as const;

export async function startClientSuite(): Promise<ClientSuite> {
  const log = new CapturedLog();
  const gateway = await startConformanceGateway({
    logDestination: log,
    extraModels: CLAUDE_CODE_MODEL_NAMES.extraModels.map((model) => ({
      slug: model.slug,
      kind: model.kind,
      family: model.family,
      aliases: [...model.aliases],
    })),
    aliases: CLAUDE_CODE_MODEL_NAMES.aliases,
  });
  for (const kind of PROVIDER_KINDS) {
    gateway.upstreams[kind].answerWith((request) => answerAsAgentModel(kind, request));
  }
  const scratch = await mkdtemp(join(tmpdir(), "hi-clients-"));
  const isolated = loopbackNamespaceAvailable();
  let bridge: WireBridge;
  try {
    bridge = await startWireBridge(gateway.url, isolated ? { socketDir: scratch } : {});
  } catch (error) {
    await gateway.close();
    throw error;
  }
  // Inside the namespace nothing else listens, so the relay takes the gateway's own port.
  const gatewayPort = Number(new URL(gateway.url).port);
  const clientUrl = isolated ? `http://127.0.0.1:${gatewayPort}` : bridge.listening;

  return {
    gateway,
    clientUrl,
    isolated,
    scratch,
    async run(command) {
      const exchangeMark = bridge.exchanges.length;
      const lineMark = log.requestLines().length;
      const result = await runCli({
        command: command.command,
        args: command.args,
        env: command.env,
        cwd: command.cwd,
        timeoutMs: command.timeoutMs ?? 90_000,
        ...(isolated ? { namespace: { port: gatewayPort, socketPath: bridge.listening } } : {}),
      });
      const exchanges = bridge.exchanges.slice(exchangeMark);
      // Request lines are handed to the log in batches within 100 ms: wait past that, then for at
      // least one line per exchange (a WebSocket's turns add lines of their own).
      await new Promise((resolve) => setTimeout(resolve, 250));
      const deadline = Date.now() + 3000;
      while (log.requestLines().length - lineMark < exchanges.length && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
      const requestLines = log.requestLines().slice(lineMark);
      return Object.assign(result, { exchanges, requestLines });
    },
    async close() {
      await bridge.close();
      await gateway.close();
      await rm(scratch, { recursive: true, force: true });
    },
  };
}

/** The exchanges and request lines of a run the gateway refused (any 4xx), for assertion messages. */
export function refusals(run: ClientRun): string[] {
  const onWire = run.exchanges
    .filter((exchange) => exchange.status >= 400 && exchange.status < 500)
    .map((exchange) => `${exchange.status} ${exchange.method} ${exchange.path}`);
  const inLog = run.requestLines
    .filter((line) => typeof line.status === "number" && line.status >= 400 && line.status < 500)
    .map(
      (line) =>
        `log: ${line.status} ${line.route} ${line.errorCode} ${line.errorParam ?? ""} ${line.errorMessage ?? ""}`,
    );
  return [...onWire, ...inLog];
}

/**
 * What is measured: each scenario is one kind of client request, expressed for each target. The
 * direct and proxy targets speak the upstream's own API (`/v1/...`, upstream model names); the
 * gateway (and the baseline gateway of `--compare-dir`) gets the same request on its public API
 * (`/api/v1/...`, catalog slugs) with its own key.
 * The cross-format scenario is a Messages request: the upstream answers it natively when called
 * directly (and through the proxy), while the gateway translates it to Chat Completions upstream
 * and the answer back — the same client-visible exchange with a translation in the middle.
 */
import { buildRawRequest } from "./http-connection.js";
import { FAST_UPSTREAM_MODEL, SLOW_UPSTREAM_MODEL } from "./upstream-server.js";

export type TargetKind = "direct" | "proxy" | "gateway" | "baseline";
export const TARGET_KINDS: readonly TargetKind[] = ["direct", "proxy", "gateway", "baseline"];

/** The gateway and the baseline (`--compare-dir`: another checkout's gateway) speak the gateway's API. */
export function speaksGatewayApi(kind: TargetKind): boolean {
  return kind === "gateway" || kind === "baseline";
}

export interface TargetEndpoint {
  kind: TargetKind;
  host: string;
  port: number;
  /** A gateway's (or the baseline's) own API key; the others ignore credentials. */
  apiKey?: string;
}

export type ScenarioId = "chat-json" | "chat-sse" | "messages-sse";

export interface Scenario {
  id: ScenarioId;
  title: string;
  stream: boolean;
  /** Checks a first answer, so a run of fast error responses is never mistaken for speed. */
  validate(body: string): string | undefined;
}

export const SCENARIOS: readonly Scenario[] = [
  {
    id: "chat-json",
    title: "Chat Completions, non-streaming",
    stream: false,
    validate: (body) => {
      try {
        const content = JSON.parse(body)?.choices?.[0]?.message?.content;
        return typeof content === "string" && content.length > 0
          ? undefined
          : "no choices[0].message.content";
      } catch {
        return `not JSON: ${body.slice(0, 200)}`;
      }
    },
  },
  {
    id: "chat-sse",
    title: "Chat Completions, streaming",
    stream: true,
    validate: (body) =>
      body.includes('"content":') && body.trimEnd().endsWith("data: [DONE]")
        ? undefined
        : `not a finished chat stream: ${body.slice(0, 200)}`,
  },
  {
    id: "messages-sse",
    title: "Messages in, Chat Completions upstream, streaming (gateway translates)",
    stream: true,
    validate: (body) =>
      body.includes("text_delta") && body.includes("event: message_stop")
        ? undefined
        : `not a finished messages stream: ${body.slice(0, 200)}`,
  },
];

/** Catalog slugs of the bench gateway config (see gateway-target.ts). */
export const FAST_GATEWAY_MODEL = "bench/fast";
export const SLOW_GATEWAY_MODEL = "bench/slow";

const SYSTEM_PROMPT =
  "You are a concise assistant for an engineering team. Answer in plain prose, at most three sentences.";
const USER_PROMPT =
  "In two or three sentences: what does an AI gateway do for a company that uses several model " +
  "providers, and why would it record the cost of every request?";

/** The request bytes of `scenario` for `target` (slow: the 1,000-stream scenario's model). */
export function buildScenarioRequest(scenario: ScenarioId, target: TargetEndpoint, slow = false): Buffer {
  const viaGateway = speaksGatewayApi(target.kind);
  const model = viaGateway
    ? slow
      ? SLOW_GATEWAY_MODEL
      : FAST_GATEWAY_MODEL
    : slow
      ? SLOW_UPSTREAM_MODEL
      : FAST_UPSTREAM_MODEL;
  const key = target.apiKey ?? "sk-bench-client";
  if (scenario === "messages-sse") {
    return buildRawRequest({
      method: "POST",
      host: target.host,
      port: target.port,
      path: viaGateway ? "/api/v1/messages" : "/v1/messages",
      headers: { "x-api-key": key, "anthropic-version": "2023-06-01", "User-Agent": "hi-gateway-bench" },
      body: JSON.stringify({
        model,
        max_tokens: 256,
        system: SYSTEM_PROMPT,
        messages: [{ role: "user", content: USER_PROMPT }],
        temperature: 0.2,
        stream: true,
      }),
    });
  }
  const stream = scenario === "chat-sse";
  return buildRawRequest({
    method: "POST",
    host: target.host,
    port: target.port,
    path: viaGateway ? "/api/v1/chat/completions" : "/v1/chat/completions",
    headers: { Authorization: `Bearer ${key}`, "User-Agent": "hi-gateway-bench" },
    body: JSON.stringify({
      model,
      messages: [
        { role: "system", content: SYSTEM_PROMPT },
        { role: "user", content: USER_PROMPT },
      ],
      max_tokens: 256,
      temperature: 0.2,
      ...(stream ? { stream: true, stream_options: { include_usage: true } } : {}),
    }),
  });
}

/** `GET /healthz` of the gateway (the responsiveness probe); other targets answer 404, which is fine. */
export function buildProbeRequest(target: TargetEndpoint): Buffer {
  return buildRawRequest({ method: "GET", host: target.host, port: target.port, path: "/healthz" });
}

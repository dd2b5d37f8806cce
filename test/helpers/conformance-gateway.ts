/**
 * A real gateway (embedded mode: in-memory PGlite, in-process state) whose catalog has ONE model per
 * provider kind, each routed to its own fake upstream on loopback, for the conformance matrix
 * (test/conformance, docs/conformance.md):
 *
 * | catalog model                      | kind               | fake upstream                          |
 * |------------------------------------|--------------------|----------------------------------------|
 * | `conformance/openai-compatible`    | `openai-compatible`| fake-openai-upstream (Chat wire)       |
 * | `conformance/openai-chat`          | `openai-chat`      | fake-openai-upstream (Chat wire)       |
 * | `conformance/openai-responses`     | `openai-responses` | fake-openai-responses-upstream         |
 * | `conformance/anthropic`            | `anthropic`        | fake-anthropic-upstream                |
 * | `conformance/google`               | `google`           | fake-google-upstream                   |
 *
 * Every model has the features tools, vision, json_mode, reasoning and streaming, so no adapter
 * leaves a scenario out for lack of a feature. Start one per test file (start-up is ~1 s) and drive
 * the fakes per test with {@link KindUpstream.serve}: it answers the next requests of that upstream
 * with the given replies, in order, and anything beyond them with an HTTP 500 that names the
 * surplus request, so a cell that calls upstream more often than scripted fails loudly instead of
 * picking up another cell's answer.
 */
import { randomBytes } from "node:crypto";
import type { IncomingHttpHeaders } from "node:http";
import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import type { AdminService } from "../../src/admin/admin-service.js";
import type { ProviderKind } from "../../src/catalog/types.js";
import { buildConfig } from "../../src/config/load-config.js";
import type { Settings } from "../../src/config/settings.js";
import { type RunningGateway, startGateway } from "../../src/gateway.js";
import { createLogger } from "../../src/logging/logger.js";
import { IN_MEMORY_DATA_DIR } from "../../src/storage/open-store.js";
import { startFakeAnthropicUpstream } from "./fake-anthropic-upstream.js";
import {
  type FakeGoogleReply,
  type FakeGoogleUpstream,
  startFakeGoogleUpstream,
} from "./fake-google-upstream.js";
import { startFakeOpenAiResponsesUpstream } from "./fake-openai-responses-upstream.js";
import { type FakeOpenAiUpstream, type FakeReply, startFakeOpenAiUpstream } from "./fake-openai-upstream.js";

export const PROVIDER_KINDS: readonly ProviderKind[] = [
  "openai-compatible",
  "openai-chat",
  "openai-responses",
  "anthropic",
  "google",
];

/** Catalog slug of the model routed to `kind`. */
export function conformanceModel(kind: ProviderKind): string {
  return `conformance/${kind}`;
}

/** The upstream model id each route sends (Gemini 3 naming, so Gemini 3 signature rules apply). */
export const UPSTREAM_MODELS: Record<ProviderKind, string> = {
  "openai-compatible": "vendor-chat-model-1",
  "openai-chat": "gpt-5-mini",
  "openai-responses": "gpt-5",
  anthropic: "claude-sonnet-4-5",
  google: "gemini-3-pro-preview",
};

/** The upstream key each provider is configured with (header checked by the matrix). */
export const UPSTREAM_KEYS: Record<ProviderKind, string> = {
  "openai-compatible": "sk-compatible-upstream",
  "openai-chat": "sk-openai-chat-upstream",
  "openai-responses": "sk-openai-responses-upstream",
  anthropic: "sk-ant-upstream",
  google: "gemini-upstream-key",
};

/** Output cap of every conformance model when the caller gives none. */
export const CONFORMANCE_MAX_OUTPUT_TOKENS = 32_000;

/** What every fake records, whatever its wire format. */
export interface UpstreamRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  // biome-ignore lint/suspicious/noExplicitAny: tests read arbitrary wire fields from it.
  body: any;
  rawBody: string;
}

/** A reply of any of the fakes (the Google fake has its own, structurally identical, type). */
export type UpstreamReply = FakeReply | FakeGoogleReply;

export interface KindUpstream {
  kind: ProviderKind;
  /** Catalog slug routed here. */
  model: string;
  upstreamModel: string;
  /** `http://127.0.0.1:<port>`: a URL under it that nobody should fetch (image-by-URL cells). */
  origin: string;
  /** Every request received so far, in arrival order. */
  readonly requests: readonly UpstreamRequest[];
  /** Answers the next requests with `replies`, in order; later ones get an HTTP 500. */
  serve(...replies: UpstreamReply[]): void;
  /** Answers every request beyond the scripted replies with `handler` instead of an HTTP 500. */
  answerWith(handler: ((request: UpstreamRequest) => UpstreamReply) | undefined): void;
}

export interface ConformanceGateway {
  gateway: RunningGateway;
  admin: AdminService;
  url: string;
  apiKey: string;
  upstreams: Record<ProviderKind, KindUpstream>;
  /** `openai` client on `${url}/api/v1`, no retries (errors surface as they are). */
  openai: OpenAI;
  /** `@anthropic-ai/sdk` client on `${url}/api` (the SDK appends `/v1/messages`), no retries. */
  anthropic: Anthropic;
  close(): Promise<void>;
}

type AnyFake = FakeOpenAiUpstream | FakeGoogleUpstream;

/**
 * A further catalog model routed to one kind's fake, for names a client sends by itself: its
 * `aliases` (a provider's own ids) and its `family` (which the operator's `aliases` may name).
 */
export interface ExtraConformanceModel {
  slug: string;
  kind: ProviderKind;
  aliases?: string[];
  family?: string;
  releaseDate?: string;
}

export async function startConformanceGateway(
  options: {
    credits?: string;
    logDestination?: NodeJS.WritableStream;
    extraModels?: readonly ExtraConformanceModel[];
    /** The operator's `aliases` map (config `aliases`). */
    aliases?: Record<string, string | { family: string }>;
  } = {},
): Promise<ConformanceGateway> {
  const fakes: Record<ProviderKind, AnyFake> = {
    "openai-compatible": await startFakeOpenAiUpstream(),
    "openai-chat": await startFakeOpenAiUpstream(),
    "openai-responses": await startFakeOpenAiResponsesUpstream(),
    anthropic: await startFakeAnthropicUpstream(),
    google: await startFakeGoogleUpstream(),
  };
  const closeFakes = () => Promise.all(Object.values(fakes).map((fake) => fake.close()));

  const env: Record<string, string> = {};
  const providers = PROVIDER_KINDS.map((kind) => {
    const envName = `CONFORMANCE_${kind.toUpperCase().replaceAll("-", "_")}_KEY`;
    env[envName] = UPSTREAM_KEYS[kind];
    return {
      id: kind,
      kind,
      base_url: fakes[kind].baseUrl,
      api_key_env: envName,
      timeouts: { connect_ms: 2000, first_byte_ms: 5000, response_ms: 5000, idle_ms: 5000 },
    };
  });
  const catalogModels = [
    ...PROVIDER_KINDS.map((kind) => ({ slug: conformanceModel(kind), kind })),
    ...(options.extraModels ?? []),
  ];
  const models = catalogModels.map(({ slug, kind, ...names }: ExtraConformanceModel) => ({
    slug,
    ...(names.aliases === undefined ? {} : { aliases: names.aliases }),
    ...(names.family === undefined ? {} : { family: names.family }),
    name: `Conformance ${kind}`,
    provider: { slug: "conformance", name: "Conformance" },
    description: `Routed to a fake ${kind} upstream`,
    release_date: names.releaseDate ?? "2026-01-01",
    context_length: 200_000,
    max_output_tokens: CONFORMANCE_MAX_OUTPUT_TOKENS,
    pricing: { prompt: "2", completion: "8", cached_prompt: "0.5" },
    features: ["tools", "vision", "json_mode", "reasoning", "streaming"],
    datacenter_locations: ["local"],
    routes: [{ provider: kind, model: UPSTREAM_MODELS[kind] }],
  }));
  // Each cell translates exactly one upstream answer: no retry (a scripted error served once would
  // be asked for again) and no breaker (error cells in a row would open it and skip the route).
  // Routing itself is tested in test/e2e/route-fallback.test.ts and src/engine/generation-run.test.ts.
  const routing = { retries: 0, breaker_failures: 1000 };
  const config = buildConfig(
    { providers, models, routing, ...(options.aliases === undefined ? {} : { aliases: options.aliases }) },
    env,
  );

  const settings: Settings = {
    port: 0,
    host: "127.0.0.1",
    databaseUrl: undefined,
    redisUrl: undefined,
    dataDir: IN_MEMORY_DATA_DIR,
    configPath: "(conformance)",
    internalSharedSecret: `conformance-${randomBytes(8).toString("hex")}`,
    logLevel: process.env.TEST_LOG_LEVEL ?? (options.logDestination === undefined ? "silent" : "info"),
  };
  let gateway: RunningGateway;
  try {
    gateway = await startGateway({
      settings,
      config,
      logger: createLogger(settings.logLevel, options.logDestination),
      drainMs: 500,
      statePrefix: `conformance:${randomBytes(6).toString("hex")}:`,
    });
  } catch (error) {
    await closeFakes();
    throw error;
  }
  // The gateway's own admin service: like its admin API, it applies a key change to this
  // instance's next request at once instead of after the Redis announcement comes back.
  const admin = gateway.admin;
  const workspace = await admin.createWorkspace({
    name: "conformance",
    creditsUsd: options.credits ?? "1000",
  });
  const { secret } = await admin.createKey({ workspaceId: workspace.id, name: "conformance" });

  const upstreams = Object.fromEntries(
    PROVIDER_KINDS.map((kind) => [kind, createKindUpstream(kind, fakes[kind])]),
  ) as Record<ProviderKind, KindUpstream>;

  return {
    gateway,
    admin,
    url: gateway.url,
    apiKey: secret,
    upstreams,
    openai: new OpenAI({ apiKey: secret, baseURL: `${gateway.url}/api/v1`, maxRetries: 0, timeout: 20_000 }),
    anthropic: new Anthropic({
      apiKey: secret,
      baseURL: `${gateway.url}/api`,
      maxRetries: 0,
      timeout: 20_000,
    }),
    async close() {
      await gateway.close();
      await closeFakes();
    },
  };
}

function createKindUpstream(kind: ProviderKind, fake: AnyFake): KindUpstream {
  let pending: UpstreamReply[] = [];
  let fallback: ((request: UpstreamRequest) => UpstreamReply) | undefined;
  const surplus = (request: { method: string; path: string }): UpstreamReply => ({
    kind: "error",
    status: 500,
    body: {
      error: {
        message: `conformance: no scripted reply left for ${request.method} ${request.path}`,
        type: "server_error",
      },
    },
  });
  const handler = (request: UpstreamRequest) =>
    pending.shift() ?? (fallback === undefined ? surplus(request) : fallback(request));
  // Both fakes take structurally identical replies; only their declared types differ.
  (fake.setHandler as (handler: (request: UpstreamRequest) => UpstreamReply) => void)(handler);
  return {
    kind,
    model: conformanceModel(kind),
    upstreamModel: UPSTREAM_MODELS[kind],
    origin: fake.origin,
    get requests() {
      return fake.requests as readonly UpstreamRequest[];
    },
    serve(...replies) {
      pending = [...replies];
    },
    answerWith(next) {
      fallback = next;
    },
  };
}

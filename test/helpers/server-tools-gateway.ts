/**
 * A real gateway with server tools configured, for end-to-end tests of the tool loop: one catalog
 * model per provider kind (`tools/<kind>`), each routed to its own fake upstream on loopback, a
 * fake SearXNG instance as the web_search backend, web_fetch with its network replaced by the
 * fetch tripwire (test/helpers/fetch-tripwire.ts, so no fetch can leave this machine), and a fixed
 * clock for datetime. Embedded or distributed (fresh PostgreSQL database, Redis with a random
 * prefix). The official clients go through a wire tap, so tests read the raw SSE frames too.
 *
 * | catalog model             | kind               | fake upstream                    |
 * |---------------------------|--------------------|----------------------------------|
 * | `tools/openai-compatible` | `openai-compatible`| fake-openai-upstream             |
 * | `tools/openai-responses`  | `openai-responses` | fake-openai-responses-upstream   |
 * | `tools/anthropic`         | `anthropic`        | fake-anthropic-upstream          |
 * | `tools/google`            | `google`           | fake-google-upstream             |
 *
 * Prices: $2/M prompt, $8/M completion (2 and 8 micro-USD per token); a search costs
 * {@link SEARCH_PRICE_MICRO_USD}, a page fetch {@link FETCH_PRICE_MICRO_USD}, datetime nothing.
 */
import { randomBytes } from "node:crypto";
import { type TestContext, test } from "node:test";
import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import type { AdminService } from "../../src/admin/admin-service.js";
import { buildConfig } from "../../src/config/load-config.js";
import type { Settings } from "../../src/config/settings.js";
import { type RunningGateway, startGateway } from "../../src/gateway.js";
import { createLogger } from "../../src/logging/logger.js";
import type { FetchNetwork } from "../../src/server-tools/web-fetch/index.js";
import { IN_MEMORY_DATA_DIR } from "../../src/storage/open-store.js";
import { createWireTap, type WireTap } from "../conformance/support/wire-tap.js";
import type { UpstreamReply, UpstreamRequest } from "./conformance-gateway.js";
import { startFakeAnthropicUpstream } from "./fake-anthropic-upstream.js";
import { startFakeGoogleUpstream } from "./fake-google-upstream.js";
import { startFakeOpenAiResponsesUpstream } from "./fake-openai-responses-upstream.js";
import { type FakeOpenAiUpstream, startFakeOpenAiUpstream } from "./fake-openai-upstream.js";
import { type FakeSearchBackend, startFakeSearchBackend } from "./fake-search-backend.js";
import { createTestDatabase, requireMode, TEST_REDIS_URL } from "./storage-modes.js";
import type { GatewayMode } from "./test-gateway.js";

/** The provider kinds the tool loop is run against (`openai-chat` shares the Chat wire of `openai-compatible`). */
export const LOOP_KINDS = ["openai-compatible", "openai-responses", "anthropic", "google"] as const;
export type LoopKind = (typeof LOOP_KINDS)[number];

export const UPSTREAM_MODELS: Record<LoopKind, string> = {
  "openai-compatible": "vendor-chat-model-1",
  "openai-responses": "gpt-5",
  anthropic: "claude-sonnet-4-5",
  google: "gemini-3-pro-preview",
};

export function toolsModel(kind: LoopKind): string {
  return `tools/${kind}`;
}

/** Micro-USD per prompt and per completion token at the catalog's $2/M and $8/M. */
export const PROMPT_MICRO_USD = 2;
export const COMPLETION_MICRO_USD = 8;
/** `price_per_call_usd: "0.005"` of the SearXNG backend. */
export const SEARCH_PRICE_MICRO_USD = 5_000;
export const FETCH_PRICE_MICRO_USD = 1_000;
/** The datetime tool's clock: 01:30 UTC, 03:30 in Paris (the night clocks moved to summer time). */
export const FIXED_NOW = new Date("2026-03-29T01:30:00Z");

/** A fake upstream driven per test: `serve` scripts the next calls, `calls` are those since. */
export interface ScriptedUpstream {
  kind: LoopKind;
  model: string;
  upstreamModel: string;
  /** Requests received since the last `serve`. */
  readonly calls: readonly UpstreamRequest[];
  /** Answers the next requests with `replies` in order; any further one gets an HTTP 500 naming it. */
  serve(...replies: UpstreamReply[]): void;
  /**
   * Answers every request by what it carries, until the next `serve`: for requests of several
   * clients at once, whose order of arrival no script can know.
   */
  respond(answer: (request: UpstreamRequest) => UpstreamReply): void;
}

export interface Account {
  workspaceId: string;
  keyId: string;
  apiKey: string;
  initialBalanceMicroUsd: number;
  openai: OpenAI;
  anthropic: Anthropic;
}

export interface ServerToolsGateway extends Account {
  mode: GatewayMode;
  gateway: RunningGateway;
  admin: AdminService;
  url: string;
  upstreams: Record<LoopKind, ScriptedUpstream>;
  /** The SearXNG backend, when web_search is configured. */
  search: FakeSearchBackend;
  /** Every exchange of every client this helper made. */
  tap: WireTap;
  /** A new workspace with `credits` USD and one key (with the given limits) for it, and its clients. */
  createAccount(options?: { credits?: string; dailyLimitUsd?: string }): Promise<Account>;
  /** `GET /api/v1/generation?id=…` with `apiKey`, once the record is final. */
  lookupGeneration(id: string, apiKey?: string): Promise<GenerationView>;
  close(): Promise<void>;
}

export interface GenerationView {
  id: string;
  status: string;
  stream: boolean;
  total_cost: number;
  cost_micro_usd: string;
  tool_costs_micro_usd: Record<string, string>;
  tokens_prompt: number;
  tokens_completion: number;
  finish_reason: string | null;
}

export interface ServerToolsGatewayOptions {
  mode?: GatewayMode;
  /** false: no `server_tools.web_search` section (activating web_search is refused). Default true. */
  webSearch?: boolean;
  /** The SearXNG backend's deadline (default 5 s). */
  searchTimeoutMs?: number;
  /** `server_tools.web_fetch` fields beyond the price (e.g. the loopback escape hatch and its port). */
  webFetch?: Record<string, unknown>;
  fetchNetwork?: FetchNetwork;
  maxRounds?: number;
}

export async function startServerToolsGateway(
  options: ServerToolsGatewayOptions = {},
): Promise<ServerToolsGateway> {
  const mode = options.mode ?? "embedded";
  const fakes: Record<LoopKind, FakeOpenAiUpstream> = {
    "openai-compatible": await startFakeOpenAiUpstream(),
    "openai-responses": await startFakeOpenAiResponsesUpstream(),
    anthropic: await startFakeAnthropicUpstream(),
    google: await startFakeGoogleUpstream(),
  };
  const search = await startFakeSearchBackend();
  const database = mode === "distributed" ? await createTestDatabase() : undefined;
  const closeParts = async () => {
    await Promise.all([...Object.values(fakes).map((fake) => fake.close()), search.close()]);
    await database?.drop();
  };

  const env: Record<string, string> = {};
  const providers = LOOP_KINDS.map((kind) => {
    const envName = `TOOLS_${kind.toUpperCase().replaceAll("-", "_")}_KEY`;
    env[envName] = `sk-${kind}-upstream`;
    return {
      id: kind,
      kind,
      base_url: fakes[kind].baseUrl,
      api_key_env: envName,
      timeouts: { connect_ms: 2000, first_byte_ms: 5000, response_ms: 5000, idle_ms: 5000 },
    };
  });
  const models = LOOP_KINDS.map((kind) => ({
    slug: toolsModel(kind),
    name: `Tools ${kind}`,
    provider: { slug: "tools", name: "Tools" },
    description: `Routed to a fake ${kind} upstream`,
    release_date: "2026-01-01",
    context_length: 200_000,
    max_output_tokens: 4096,
    pricing: { prompt: "2", completion: "8", cached_prompt: "0.5" },
    features: ["tools", "streaming"],
    datacenter_locations: ["local"],
    routes: [{ provider: kind, model: UPSTREAM_MODELS[kind] }],
  }));
  const serverTools: Record<string, unknown> = {
    web_fetch: { price_per_call_micro_usd: FETCH_PRICE_MICRO_USD, ...options.webFetch },
    ...(options.maxRounds === undefined ? {} : { max_rounds: options.maxRounds }),
  };
  if (options.webSearch !== false) {
    serverTools.web_search = {
      backends: [
        {
          id: "searxng",
          kind: "searxng",
          base_url: search.baseUrl,
          price_per_call_usd: "0.005",
          ...(options.searchTimeoutMs === undefined ? {} : { timeout_ms: options.searchTimeoutMs }),
        },
      ],
    };
  }
  // One upstream answer per scripted reply: no retry or breaker may ask a fake twice.
  const routing = { retries: 0, breaker_failures: 1000 };
  const config = buildConfig({ providers, models, routing, server_tools: serverTools }, env);

  const settings: Settings = {
    port: 0,
    host: "127.0.0.1",
    databaseUrl: database?.url,
    redisUrl: mode === "distributed" ? TEST_REDIS_URL : undefined,
    dataDir: IN_MEMORY_DATA_DIR,
    configPath: "(server tools)",
    internalSharedSecret: `tools-${randomBytes(8).toString("hex")}`,
    logLevel: process.env.TEST_LOG_LEVEL ?? "silent",
  };
  let gateway: RunningGateway;
  try {
    gateway = await startGateway({
      settings,
      config,
      logger: createLogger(settings.logLevel),
      drainMs: 500,
      statePrefix: `tools:${randomBytes(6).toString("hex")}:`,
      serverTools: {
        now: () => FIXED_NOW,
        ...(options.fetchNetwork === undefined ? {} : { fetchNetwork: options.fetchNetwork }),
      },
    });
  } catch (error) {
    await closeParts();
    throw error;
  }
  const admin = gateway.admin;
  const tap = createWireTap();

  const createAccount = async (account: { credits?: string; dailyLimitUsd?: string } = {}) => {
    const credits = account.credits ?? "10";
    const workspace = await admin.createWorkspace({
      name: `server-tools-${randomBytes(4).toString("hex")}`,
      creditsUsd: credits,
    });
    const { key, secret } = await admin.createKey({
      workspaceId: workspace.id,
      name: "server-tools",
      ...(account.dailyLimitUsd === undefined ? {} : { dailyLimitUsd: account.dailyLimitUsd }),
    });
    return {
      workspaceId: workspace.id,
      keyId: key.id,
      apiKey: secret,
      initialBalanceMicroUsd: Math.round(Number(credits) * 1e6),
      openai: new OpenAI({
        apiKey: secret,
        baseURL: `${gateway.url}/api/v1`,
        maxRetries: 0,
        timeout: 20_000,
        fetch: tap.fetch,
      }),
      anthropic: new Anthropic({
        apiKey: secret,
        baseURL: `${gateway.url}/api`,
        maxRetries: 0,
        timeout: 20_000,
        fetch: tap.fetch,
      }),
    };
  };
  const main = await createAccount();

  const upstreams = Object.fromEntries(
    LOOP_KINDS.map((kind) => [kind, createScriptedUpstream(kind, fakes[kind])]),
  ) as Record<LoopKind, ScriptedUpstream>;

  return {
    ...main,
    mode,
    gateway,
    admin,
    url: gateway.url,
    upstreams,
    search,
    tap,
    createAccount,
    async lookupGeneration(id, apiKey = main.apiKey) {
      // A streamed request settles as its stream ends; the record is final a moment later.
      for (let attempt = 0; ; attempt++) {
        const response = await fetch(`${gateway.url}/api/v1/generation?id=${encodeURIComponent(id)}`, {
          headers: { authorization: `Bearer ${apiKey}` },
        });
        const body = (await response.json()) as { data: GenerationView };
        if (response.status !== 200) throw new Error(`generation lookup: ${JSON.stringify(body)}`);
        if (body.data.status !== "in_progress" || attempt >= 250) return body.data;
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    },
    async close() {
      await gateway.close();
      await closeParts();
    },
  };
}

function createScriptedUpstream(kind: LoopKind, fake: FakeOpenAiUpstream): ScriptedUpstream {
  let pending: UpstreamReply[] = [];
  let responder: ((request: UpstreamRequest) => UpstreamReply) | undefined;
  let mark = 0;
  fake.setHandler((request) => {
    if (responder !== undefined) return responder(request as UpstreamRequest);
    const next = pending.shift();
    if (next !== undefined) return next;
    return {
      kind: "error",
      status: 500,
      body: { error: { message: `no scripted reply left for ${request.method} ${request.path}` } },
    };
  });
  return {
    kind,
    model: toolsModel(kind),
    upstreamModel: UPSTREAM_MODELS[kind],
    get calls() {
      return fake.requests.slice(mark) as readonly UpstreamRequest[];
    },
    serve(...replies) {
      responder = undefined;
      pending = [...replies];
      mark = fake.requests.length;
    },
    respond(answer) {
      responder = answer;
      pending = [];
      mark = fake.requests.length;
    },
  };
}

/**
 * Registers `title [embedded]` and `title [distributed]`, each with its own gateway; the
 * distributed one skips (fails under CI=true) when PostgreSQL or Redis is unreachable.
 */
export function forEachToolsGatewayMode(
  title: string,
  options: Omit<ServerToolsGatewayOptions, "mode">,
  fn: (context: ServerToolsGateway, t: TestContext) => Promise<void>,
): void {
  for (const mode of ["embedded", "distributed"] as const) {
    test(`${title} [${mode}]`, async (t) => {
      if (mode === "distributed") {
        if (!(await requireMode(t, "postgres")) || !(await requireMode(t, "redis"))) return;
      }
      const context = await startServerToolsGateway({ ...options, mode });
      try {
        await fn(context, t);
      } finally {
        await context.close();
      }
    });
  }
}

/** Runtime (camelCase, validated, money-as-integers) view of the config file. */
import type { CatalogModel, ModelNames, ProviderConfig } from "../catalog/types.js";
import type { DatetimeConfigFile } from "./server-tools/datetime-config.js";
import type { ImageToolConfigFile } from "./server-tools/image-config.js";
import type { PdfToolConfigFile } from "./server-tools/pdf-config.js";
import type { WebFetchConfigFile } from "./server-tools/web-fetch-config.js";
import type { WebSearchConfigFile } from "./server-tools/web-search-config.js";

export interface GatewayConfig {
  providers: ProviderConfig[];
  models: CatalogModel[];
  modelsBySlug: Map<string, CatalogModel>;
  /** Every name a request may use for a model, built once at load (build-model-names.ts). */
  modelNames: ModelNames;
  maxBodyBytes: number;
  /** Caps on one request's messages, content blocks (all messages together) and tools. */
  requestShape: { maxMessages: number; maxContentParts: number; maxTools: number };
  /** Requests per minute of keys without their own value; null: unlimited. */
  defaultRequestsPerMinute: number | null;
  /** Lifetime of a spend reservation that is no longer refreshed (its instance is gone). */
  reservationTtlMs: number;
  /** After Redis lost its memory: no admission against a limit for this long (`limits.limit_store_recovery_seconds`). */
  limitStoreRecoveryMs: number;
  /** An instance silent in Redis this long has died (`limits.instance_lease_seconds`). */
  instanceLeaseMs: number;
  /** The longest one generation may run (`limits.max_request_seconds`). */
  maxRequestMs: number;
  /** How long a streaming client may take no bytes before it is dropped. */
  clientReadTimeoutMs: number;
  /** Bytes of complete answers that may wait for clients not reading them (`limits.held_answers_bytes`). */
  heldAnswersBytes: number;
  /** How long a Responses WebSocket may sit with no turn and no message before it is closed. */
  webSocketIdleTimeoutMs: number;
  defaultWorkspaceCreditsMicroUsd: number;
  /** Failover, retries and circuit breaking across routes (`routing.*`). */
  routing: {
    retries: number;
    retryBaseDelayMs: number;
    maxRetryAfterMs: number;
    failoverDeadlineMs: number;
    breakerFailures: number;
    breakerCooldownMs: number;
    /** Same prompt-cache key or prefix → same route (engine/prompt-cache-affinity.ts). */
    promptCacheAffinity: boolean;
  };
  /** The exact response cache (`response_cache.*`, docs/response-cache.md). */
  responseCache: {
    maxEntryBytes: number;
    memoryBytes: number;
    maxTtlSeconds: number;
  };
  /**
   * `meta.image_generation_configured`: the `image` tool is configured and at least one of its
   * providers can be called (its key variable is set, or it needs none).
   */
  imageGenerationConfigured: boolean;
  /**
   * The server tools (`server_tools`): the loop's round cap and each tool's section as the file has
   * it (server-tools/ builds the tools from them). Absent in configs built in code: no server tool.
   */
  serverTools?: {
    maxRounds: number;
    /** The most calls of one tool a provider running it itself may make per upstream round. */
    maxNativeCallsPerRound: number;
    webSearch?: WebSearchConfigFile;
    webFetch: WebFetchConfigFile;
    datetime: DatetimeConfigFile;
    /** Absent in configs built in code: the defaults. */
    pdf?: PdfToolConfigFile;
    /** Absent: the `image` tool is not configured. */
    image?: ImageToolConfigFile;
  };
  /** Origins whose browsers may call the public API: `["*"]` (any), a list, or none (CORS off). */
  cors: { allowedOrigins: readonly string[] };
  /** `GET /metrics`: served at all, and only to callers with the internal token. */
  metrics: { enabled: boolean; requireInternalToken: boolean };
}

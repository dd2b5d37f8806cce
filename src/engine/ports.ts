/**
 * What the engine needs from outside to run and settle a generation: storage implements these
 * ports, the gateway wires them. The engine never imports storage.
 */
import type { ApiKeyWithWorkspace, KeyLimits } from "../auth/accounts.js";
import type {
  CanonicalRequest,
  CanonicalResult,
  FunctionTool,
  NativeServerTool,
  ServerToolActivation,
  ServerToolErrorCode,
  ServerToolId,
  ServerToolOutput,
} from "../canonical/index.js";
import type { ConfiguredProviderKind } from "../catalog/types.js";
import type { AdmissionRecord } from "../limits/limit-counters.js";
import type { ProviderAdapter } from "../providers/provider-adapter.js";
import type { GenerationOutcome, GenerationRecord, GenerationStart } from "./generation-record.js";

/** The adapter registered for each provider kind. */
export type AdapterRegistry = ReadonlyMap<ConfiguredProviderKind, ProviderAdapter>;

export interface GenerationRepository {
  /**
   * Writes the in-progress record; idempotent on the id. `sharedWithReservation`: its
   * `admissionRecord` was stored with the reservation, so only what that does not cover is left.
   */
  start(record: GenerationStart, sharedWithReservation?: boolean): Promise<void>;
  /**
   * Distributed mode: the in-progress record as the limit counters store it in the reservation's
   * own atomic step (one round trip before the upstream call instead of two). `record` has no
   * `createdAt` yet: the admission time is written into it there. Absent where a record is not
   * kept in the shared store (embedded mode, PostgreSQL without Redis).
   */
  admissionRecord?(record: GenerationStart): AdmissionRecord;
  /**
   * Finalises the record (with its attempts) and debits the workspace balance by `outcome.costMicroUsd` in one
   * transaction. Idempotent: a second call for the same id changes nothing. With `start`, the
   * record is written final even if it was never started (a start that failed, or one that lives
   * only in Redis or the journal); without it, an unknown id fails.
   */
  finish(id: string, outcome: GenerationOutcome, start?: GenerationStart): Promise<void>;
  /**
   * true while a record cannot leave after its answer (the database is known to be down, so it is
   * parked on disk instead): the answer then waits for `finish`. Absent or false: it does not.
   */
  answerWaitsForRecord?(): boolean;
  /** null when unknown or owned by another workspace. */
  get(id: string, workspaceId: string): Promise<GenerationRecord | null>;
  /**
   * Records still in progress that were admitted before `admittedBefore`, oldest first (then by id), at most
   * `limit`: what the sweep of interrupted requests settles (engine/interrupted-sweep.ts).
   */
  listInProgress(admittedBefore: Date, limit: number): Promise<GenerationStart[]>;
  /**
   * Up to `limit` records in progress of one instance, whatever their age; absent where records
   * carry no instance (embedded mode, PostgreSQL without Redis).
   */
  listInProgressOf?(instanceId: string, limit: number): Promise<GenerationStart[]>;
}

export interface EngineStore {
  generations: GenerationRepository;
  /**
   * A record given to `generations.start` is found by every lookup that can reach it at once,
   * before its write completes: true embedded, where the data folder's lock makes this instance
   * the only one and its repository answers for records not yet written. With PostgreSQL another
   * instance may be asked, so a caller that hands out the id first waits for the write.
   */
  readonly startedRecordsVisibleAtOnce: boolean;
}

/**
 * The authenticated caller as admission needs it: the key (status, allowlist), its workspace (lock,
 * balance) and its limits, all from the one per-instance cache of key state.
 */
export interface AdmittedCaller extends ApiKeyWithWorkspace {
  limits: KeyLimits;
}

/**
 * The server tools a gateway runs for any model (server-tools/ implements this). The engine's tool
 * loop offers a request's activated tools to the model as function tools, executes the model's
 * calls to them and hands the results back; what each tool does is the implementation's business.
 */
export interface ServerTools {
  /** Whether this gateway can run `tool` itself (configured, turned on, its backend's key set). */
  runs(tool: ServerToolId): boolean;
  /**
   * The activation as a provider runs the tool itself (`request.nativeServerTools`), its options
   * checked as for the gateway's own tool; undefined for a tool no provider runs. Throws
   * GatewayError `invalid_request` naming a malformed option.
   */
  describeNative(activation: ServerToolActivation): NativeServerTool | undefined;
  /**
   * Checks a request's activations against this gateway's configuration and prepares them for one
   * run. Throws GatewayError `invalid_request` naming the activation's field (a tool not configured
   * here, a malformed option) before anything is reserved or sent. `native`: the activated tools
   * that run at the provider on every route of the request; they get no definition and need no
   * configuration here. `caller`: whose request it is (absent for a check that runs no call).
   */
  prepare(
    request: CanonicalRequest,
    native?: ReadonlySet<ServerToolId>,
    caller?: ServerToolCaller,
  ): ServerToolSession;
}

/**
 * Who a request's tool calls are made for: tools that share a resource between callers (web_fetch's
 * HTML conversion workers) share it out per key.
 */
export interface ServerToolCaller {
  keyId: string;
  workspaceId: string;
}

/** The activated server tools of one request. */
export interface ServerToolSession {
  /** The function tools offered to the model, one per activated tool. */
  readonly definitions: readonly FunctionTool[];
  /** The server tool a model's function call names, or undefined for one of the caller's tools. */
  toolNamed(name: string): ServerToolId | undefined;
  /** The most one call of `tool` can cost, micro-USD (reserved before the call runs). */
  maxCallCostMicroUsd(tool: ServerToolId): number;
  /**
   * The most prompt tokens one call's result can add to the next round (its text's length in
   * characters, a token being at least one character in practice): bounds the next reservation.
   */
  maxResultTokens(tool: ServerToolId): number;
  /** The model's arguments, parsed for the record and the rendering (`{}` when unreadable). */
  readInput(tool: ServerToolId, argumentsJson: string): Record<string, unknown>;
  /** Runs one call. Never rejects: every failure is an outcome the model is told about. */
  execute(tool: ServerToolId, argumentsJson: string, signal: AbortSignal): Promise<ServerToolExecution>;
}

/** What one call produced: for the client (output or error, cost) and for the model (`forModel`). */
export interface ServerToolExecution {
  output?: ServerToolOutput;
  error?: { code: ServerToolErrorCode; message: string };
  /**
   * 0 for a failed call, unless the tool did its work and then had to stop (web_fetch of a page
   * too large or complex to convert): such a call costs its price.
   */
  costMicroUsd: number;
  /**
   * When part of `costMicroUsd` belongs to another tool's line (web_fetch of a PDF pays the pdf
   * tool's pages): each tool's share, summing to `costMicroUsd`. Absent: all of it is the call's tool's.
   */
  costsByTool?: Partial<Record<ServerToolId, number>>;
  /** The tool result the model reads next round. */
  forModel: string;
}

/**
 * The PDFs of a request as each route reads them (server-tools/ implements this): a route whose
 * upstream reads PDFs gets the files (one given by URL fetched by the gateway first), any other
 * the text the gateway extracts, with the file name and page markers. The run asks per route
 * candidate, since failover may move a request to a kind that cannot read PDFs.
 */
export interface DocumentPreparer {
  /**
   * The request's documents, with its `pdf` activation's options checked (engine, caps); undefined
   * when it has no file part. Throws GatewayError `invalid_request` naming the activation's field
   * before anything is reserved or sent.
   */
  prepare(request: CanonicalRequest): DocumentSession | undefined;
}

/** The documents of one request. */
export interface DocumentSession {
  /** Whether a route gets the documents' text rather than the files (`routeReadsPdf`: it could read them). */
  sendsText(routeReadsPdf: boolean): boolean;
  /** The most reading the documents can cost, micro-USD: reserved before any of it runs. */
  readonly maxCostMicroUsd: number;
  /** The most prompt tokens the documents' text adds for a route that gets it (a token is at least a byte). */
  readonly maxTextTokens: number;
  /** `request` without the inline PDFs whose text `maxTextTokens` bounds: the rest of a text route's prompt. */
  withoutDocuments(request: CanonicalRequest): CanonicalRequest;
  /**
   * `request` (the one these documents were prepared from, or one built on it that keeps its
   * parts) as a route reads it, and what reading cost. Each document is fetched and read at most
   * once per prepared request. Rejects with GatewayError `invalid_request` naming the part (`messages[0].content[1]`)
   * for a document that cannot be fetched or read, and with the signal's reason once it aborts.
   */
  requestFor(
    request: CanonicalRequest,
    routeReadsPdf: boolean,
    signal: AbortSignal,
  ): Promise<DocumentsForRoute>;
}

export interface DocumentsForRoute {
  request: CanonicalRequest;
  /** Pages whose text the route gets × the price per page; 0 for a route that gets the files. */
  costMicroUsd: number;
}

/**
 * Instance leases in the shared store (distributed mode): every instance renews its own while it
 * runs; one not renewed for `limits.instance_lease_seconds` belongs to an instance that died.
 * Times are the store's clock (Redis TIME), shared by every instance.
 */
export interface InstanceLeases {
  /** Renews this instance's lease; `wasListed` false: new, or the store lost its memory. */
  renew(instanceId: string): Promise<{ nowMs: number; wasListed: boolean }>;
  /** Every listed instance with its last renewal. */
  list(): Promise<Array<{ instanceId: string; renewedAt: number }>>;
  /** Unlists an instance whose records are all settled. */
  forget(instanceId: string): Promise<void>;
}

/**
 * The exact response cache (response-cache/ implements this; docs/response-cache.md): a complete
 * answer stored under the canonical request within one workspace, answered again at no cost.
 */
export interface AnswerCache {
  /**
   * Whether this request is cached, and under which key for how long: its own choice (`hi_cache`,
   * `X-Hi-Cache`) first, else the key's or workspace's policy (`policyTtlSeconds`), which covers
   * deterministic requests only. Undefined: not cached. Synchronous and bounded by the request's size.
   */
  ticketFor(
    request: CanonicalRequest,
    workspaceId: string,
    policyTtlSeconds: number | null,
  ): CacheTicket | undefined;
  /** The stored answer, or undefined (none, expired, or the store did not answer in time). */
  read(ticket: CacheTicket): Promise<CanonicalResult | undefined>;
  /** Stores a complete answer; one too large is skipped. Never rejects. */
  write(ticket: CacheTicket, result: CanonicalResult): Promise<void>;
  /** An answer larger than this many bytes of JSON is not stored (a streamed one stops being kept). */
  readonly maxEntryBytes: number;
}

export interface CacheTicket {
  key: string;
  ttlSeconds: number;
}

/**
 * What the engine needs of the signal that says the client left (or the instance ended the
 * request): an AbortSignal fits, and so does the lighter one the HTTP layer makes per request.
 */
export interface ClientSignal {
  readonly aborted: boolean;
  readonly reason: unknown;
  addEventListener(type: "abort", listener: () => void, options?: { once?: boolean }): void;
  removeEventListener(type: "abort", listener: () => void): void;
}

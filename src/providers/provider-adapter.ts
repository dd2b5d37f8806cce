/**
 * The contract every provider adapter fulfils. Shared code never branches on a vendor name: it
 * picks the adapter registered for a route's provider kind.
 */
import type {
  CanonicalRequest,
  CanonicalResult,
  CanonicalStreamPart,
  NativeServerToolId,
} from "../canonical/index.js";
import type { CatalogModel, ProviderConfig } from "../catalog/types.js";
import type { UpstreamInputRules } from "../metering/bound-input-tokens.js";

export interface UpstreamCall {
  request: CanonicalRequest;
  model: CatalogModel;
  provider: ProviderConfig;
  upstreamModel: string;
  /** The output cap to send: the caller's cap, else the model's maximum output. */
  maxOutputTokens: number;
  /** Aborted when the client goes away or the gateway gives up; the adapter must cancel upstream I/O. */
  signal: AbortSignal;
  /** Gateway request id, for upstream correlation headers and logs. */
  requestId: string;
  /** Trace context headers (`traceparent`, `tracestate`) of a traced request, sent upstream as is. */
  traceHeaders?: Readonly<Record<string, string>>;
  /**
   * Another route would be tried if this call failed: a streamed call that has not started
   * answering by the provider's first-byte deadline gives up then (select-head-deadline.ts).
   * Absent: no route to move on to, the call waits its response deadline.
   */
  anotherRouteWaits?: boolean;
}

/**
 * What a provider kind can do with one server tool it runs itself, as data: the engine decides per
 * route whether a request's tool runs there (`engine: "native"`) or in the gateway from these.
 */
export interface NativeToolSupport {
  /** It can restrict the tool to a list of domains. */
  allowedDomains: boolean;
  /** It can keep a list of domains out. */
  blockedDomains: boolean;
  /** It takes both lists in one call (Anthropic takes one or the other). */
  bothDomainLists: boolean;
  /** It runs the tool in a call that also offers function tools. */
  withFunctionTools: boolean;
}

export interface ProviderAdapter {
  readonly kind: string;
  /** What the upstream bills for input, for the reservation's bound (docs/limits.md). */
  readonly inputRules: UpstreamInputRules;
  /**
   * The server tools this kind can ask its upstream to run (`request.nativeServerTools`); the
   * adapter then maps the upstream's records of them to server-tool parts. Absent: none.
   */
  readonly nativeServerTools?: Readonly<Partial<Record<NativeServerToolId, NativeToolSupport>>>;
  /**
   * The upstream reads PDF files itself, for models with the catalog feature `vision` (it reads
   * pages as pictures too); see {@link routeReadsPdf}. Absent or false: a route of this kind gets
   * the text the gateway extracts from them instead.
   */
  readonly readsPdf?: boolean;
  /**
   * What of the call's request this upstream would go without, as the drop report names it
   * (`tools[4](namespace)`, `thinking.display`, a passthrough field's name): what the canonical form
   * carries only for another wire family, and the passthrough fields it does not forward. Cheap (no
   * body is built); the engine asks before each attempt, for strict mode and the report. Absent:
   * every extra and passthrough field is lost.
   */
  listDropped?(call: UpstreamCall): string[];
  /**
   * Non-streaming call. Throws a GatewayError classified into the error catalog on any failure
   * (HTTP error, refused connection, deadline, unparseable body).
   */
  generate(call: UpstreamCall): Promise<CanonicalResult>;
  /**
   * Streaming call. Errors before the first part are thrown as GatewayError (so the engine can
   * still answer with a plain HTTP error); errors after it are yielded as an `error` part and the
   * iteration ends. The last parts of a successful stream are `usage` (when known) and `finish`.
   */
  stream(call: UpstreamCall): AsyncIterable<CanonicalStreamPart>;
}

/**
 * Whether a route's upstream gets a request's PDFs as files: its kind reads them (`readsPdf`) and
 * its model sees images (a model without the `vision` feature reads no page pictures, so it gets
 * the text whatever the kind).
 */
export function routeReadsPdf(adapter: Pick<ProviderAdapter, "readsPdf">, model: CatalogModel): boolean {
  return adapter.readsPdf === true && model.features.includes("vision");
}

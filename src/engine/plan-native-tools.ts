/**
 * Where each activated web_search and web_fetch runs, per route candidate: at the provider, which
 * runs its own search or fetch (`engine: "native"`), or in the gateway (`engine: "gateway"`).
 *
 * - A tool may run at a candidate's provider when its catalog model declares it
 *   (`native_server_tools`), the route's adapter can send it (`ProviderAdapter.nativeServerTools`),
 *   and that provider applies the activation's domain lists (a list the provider cannot apply would
 *   be silently dropped; location and context size are hints and are not).
 * - A kind that cannot offer its native tools beside function tools runs them only in a call that
 *   offers nothing else: the caller's functions or another activated tool running in the gateway
 *   send the tool to the gateway on that route.
 * - Without an `engine` option a tool runs natively wherever it may, else in the gateway. A route
 *   where it can run neither way (native impossible, the gateway's tool not configured) is not
 *   tried for this request. `engine: "native"` keeps only the routes where it runs natively;
 *   `engine: "gateway"` never runs it natively.
 * - An optional activation (a client's default tool, not asked for through `plugins`) the gateway
 *   cannot run is droppable: it runs natively where a candidate can, and elsewhere the candidate goes
 *   without it (the drop report names it) instead of being refused.
 * - When no route is left, the request is refused before anything is reserved or sent:
 *   `invalid_request` naming the activation's `engine` for an explicit native engine, else the
 *   gateway's own refusal of the tool (not configured, turned off).
 */
import type {
  CanonicalRequest,
  NativeServerTool,
  ServerToolActivation,
  ServerToolId,
} from "../canonical/index.js";
import { GatewayError } from "../errors/gateway-error.js";
import type { NativeToolSupport } from "../providers/provider-adapter.js";
import type { AdapterRegistry, ServerTools } from "./ports.js";
import type { RouteCandidate } from "./route-candidates.js";

export type ToolEngine = "native" | "gateway";

/** The tools whose `engine` option this plan reads (pdf has an `engine` of its own). */
const ENGINE_TOOLS: ReadonlySet<ServerToolId> = new Set(["web_search", "web_fetch"]);

export interface NativeToolPlan {
  /** The candidates that can serve the request's tools, in their order. */
  candidates: RouteCandidate[];
  /** Activated tools that run at the provider on every candidate: the gateway prepares nothing for them. */
  nativeEverywhere: Set<ServerToolId>;
  /** The tools a candidate's provider runs itself, as its first round sends them (empty: none). */
  toolsFor(candidate: RouteCandidate): NativeServerTool[];
  /** The droppable activations a candidate goes without: its provider does not run them either. */
  droppedFor(candidate: RouteCandidate): ServerToolActivation[];
}

export interface PlanInput {
  request: CanonicalRequest;
  candidates: readonly RouteCandidate[];
  adapters: AdapterRegistry;
  serverTools: ServerTools;
  /** The most calls of one native tool in one upstream round. */
  maxCallsPerRound: number;
  /**
   * Optional activations the gateway cannot run (not configured here): they run at a candidate's
   * provider where it has the tool, and the candidate goes without them elsewhere.
   */
  droppable?: ReadonlySet<ServerToolId>;
}

export function planNativeTools(input: PlanInput): NativeToolPlan {
  const { request, candidates, adapters, serverTools } = input;
  const activations = request.serverTools;
  const droppable = input.droppable ?? new Set<ServerToolId>();
  const engines = new Map<ServerToolId, ToolEngine | undefined>();
  const described = new Map<ServerToolId, NativeServerTool>();
  for (const activation of activations) {
    const engine = readEngineOption(activation);
    engines.set(activation.id, engine);
    if (engine === "gateway") continue;
    const native = serverTools.describeNative(activation);
    if (native !== undefined) described.set(activation.id, native);
  }

  const nativeOn = new Map<RouteCandidate, Set<ServerToolId>>();
  for (const candidate of candidates) {
    const supported = adapters.get(candidate.route.provider.kind)?.nativeServerTools ?? {};
    const native = new Set<ServerToolId>();
    for (const [id, tool] of described) {
      const support = supported[tool.tool];
      if (support === undefined || candidate.model.nativeServerTools?.[tool.tool] === undefined) continue;
      if (appliesDomainLists(support, tool)) native.add(id);
    }
    const othersOffered =
      request.tools.length > 0 ||
      activations.some((activation) => !native.has(activation.id) && !droppable.has(activation.id));
    if (othersOffered) {
      for (const id of native) {
        if (supported[described.get(id)!.tool]?.withFunctionTools === false) native.delete(id);
      }
    }
    nativeOn.set(candidate, native);
  }

  // Tools no provider runs are the gateway's alone: `prepare` checks them as it always did.
  const servable = (candidate: RouteCandidate, activation: ServerToolActivation): boolean =>
    droppable.has(activation.id) ||
    !ENGINE_TOOLS.has(activation.id) ||
    nativeOn.get(candidate)!.has(activation.id) ||
    (engines.get(activation.id) !== "native" && serverTools.runs(activation.id));
  const remaining = candidates.filter((candidate) =>
    activations.every((activation) => servable(candidate, activation)),
  );
  if (remaining.length === 0) throw refuse(input, engines, servable);

  const nativeEverywhere = new Set<ServerToolId>();
  for (const activation of activations) {
    if (remaining.every((candidate) => nativeOn.get(candidate)!.has(activation.id))) {
      nativeEverywhere.add(activation.id);
    }
  }
  return {
    candidates: remaining,
    nativeEverywhere,
    toolsFor(candidate) {
      const native = nativeOn.get(candidate);
      if (native === undefined || native.size === 0) return [];
      return [...native].map((id) => {
        const tool = { ...described.get(id)! };
        tool.maxUses = Math.max(
          1,
          Math.min(tool.maxUses, input.maxCallsPerRound, request.maxToolCalls ?? Number.POSITIVE_INFINITY),
        );
        return tool;
      });
    },
    droppedFor(candidate) {
      const native = nativeOn.get(candidate);
      return activations.filter((activation) => droppable.has(activation.id) && !native?.has(activation.id));
    },
  };
}

/** `engine` of a web_search or web_fetch activation; `invalid_request` naming it when malformed. */
function readEngineOption(activation: ServerToolActivation): ToolEngine | undefined {
  if (!ENGINE_TOOLS.has(activation.id)) return undefined;
  const value = activation.parameters?.engine;
  if (value === undefined || value === null) return undefined;
  if (value === "native" || value === "gateway") return value;
  const param = `${activation.param ?? "tools"}.engine`;
  throw GatewayError.invalidRequest(
    `${param} must be "native" (the model's provider runs ${activation.id}) or "gateway" (this gateway runs it); got ${JSON.stringify(value)}`,
    param,
  );
}

/** Whether the provider applies the activation's domain lists, so none is dropped on the way. */
function appliesDomainLists(support: NativeToolSupport, tool: NativeServerTool): boolean {
  const allowed = (tool.allowedDomains?.length ?? 0) > 0;
  const blocked = (tool.blockedDomains?.length ?? 0) > 0;
  if (allowed && !support.allowedDomains) return false;
  if (blocked && !support.blockedDomains) return false;
  return !(allowed && blocked && !support.bothDomainLists);
}

/** Why no route can serve the request's tools, in the caller's terms. */
function refuse(
  input: PlanInput,
  engines: ReadonlyMap<ServerToolId, ToolEngine | undefined>,
  servable: (candidate: RouteCandidate, activation: ServerToolActivation) => boolean,
): GatewayError {
  const { request, candidates, serverTools } = input;
  const culprit = request.serverTools.find((activation) =>
    candidates.every((candidate) => !servable(candidate, activation)),
  );
  const model = request.model;
  if (culprit === undefined) {
    const first = request.serverTools[0];
    return GatewayError.invalidRequest(
      `No route of ${model} can run ${request.serverTools.map((activation) => activation.id).join(" and ")} together`,
      first.param ?? "tools",
    );
  }
  if (engines.get(culprit.id) === "native") {
    const param = `${culprit.param ?? "tools"}.engine`;
    return GatewayError.invalidRequest(
      `${param}: ${culprit.id} cannot run at the provider of ${model} (its catalog entry declares no native ${culprit.id}, ` +
        `its routes' providers cannot send it, or they cannot apply the request's domain lists with it); ` +
        `leave engine out or set it to "gateway"`,
      param,
    );
  }
  // The gateway's own refusal names what is missing (a backend, a key, a tool turned off).
  try {
    const alone = { ...request };
    alone.serverTools = [culprit];
    serverTools.prepare(alone);
  } catch (error) {
    if (error instanceof GatewayError) return error;
    throw error;
  }
  return GatewayError.invalidRequest(
    `${culprit.id} cannot run for ${model} on this gateway`,
    culprit.param ?? "tools",
  );
}

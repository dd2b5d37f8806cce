/**
 * Admission's part for server tools: a request's activated tools checked against this gateway's
 * configuration, where each runs per route (plan-native-tools.ts), and the first round's request
 * as each route candidate is sent it.
 */
import type { CanonicalRequest, LostPart, ServerToolActivation, ServerToolId } from "../canonical/index.js";
import { GatewayError } from "../errors/gateway-error.js";
import { type NativeToolPlan, planNativeTools } from "./plan-native-tools.js";
import type { AdapterRegistry, ServerToolCaller, ServerToolSession, ServerTools } from "./ports.js";
import type { RouteCandidate } from "./route-candidates.js";

export interface PreparedServerTools {
  /** The tools the gateway runs for this request (absent: none, or only providers run them). */
  session?: ServerToolSession;
  plan?: NativeToolPlan;
  /** Optional activations no route runs (a gateway without server tools): left out everywhere. */
  leftOut?: ServerToolActivation[];
}

/**
 * The request's activated server tools, checked against this gateway's configuration, and where
 * each runs per route (plan-native-tools.ts); the function names of those the gateway runs may
 * not clash with the caller's own tools.
 */
export function prepareServerTools(
  request: CanonicalRequest,
  candidates: readonly RouteCandidate[],
  caller: ServerToolCaller,
  gateway: {
    serverTools: ServerTools | undefined;
    adapters: AdapterRegistry;
    maxNativeCallsPerRound: number;
  },
): PreparedServerTools {
  if (request.serverTools.length === 0) return {};
  const { serverTools } = gateway;
  const droppable = findDroppable(request.serverTools, serverTools);
  if (serverTools === undefined) {
    const first = request.serverTools.find((activation) => !droppable.has(activation.id));
    if (first === undefined) return { leftOut: request.serverTools };
    throw GatewayError.invalidRequest(
      `Server tool "${first.id}" is not configured on this gateway`,
      first.param ?? "tools",
    );
  }
  const plan = planNativeTools({
    request,
    candidates,
    adapters: gateway.adapters,
    serverTools,
    maxCallsPerRound: gateway.maxNativeCallsPerRound,
    droppable,
  });
  // The gateway prepares only what it runs: a droppable tool runs at a provider or nowhere.
  let runHere = request;
  if (droppable.size > 0) {
    runHere = Object.assign({}, request);
    runHere.serverTools = request.serverTools.filter((activation) => !droppable.has(activation.id));
  }
  const session = serverTools.prepare(runHere, plan.nativeEverywhere, caller);
  // Only `pdf` activated: it reads file parts before the call (`documents`), no tool loop runs.
  const native = plan.candidates.some((candidate) => plan.toolsFor(candidate).length > 0);
  if (session.definitions.length === 0 && !native) return { plan };
  // A provider's own tool carries the tool's name too (`web_search`), so it may not clash either.
  const names = [...session.definitions.map((definition) => definition.name), ...plan.nativeEverywhere];
  for (const name of names) {
    const clash = request.tools.find((tool) => tool.name === name);
    if (clash !== undefined) {
      const param = clash.param ?? `tools[${request.tools.indexOf(clash)}]`;
      throw GatewayError.invalidRequest(
        `${param} is named "${name}", the name of the server tool this request activates; rename the function`,
        param,
      );
    }
  }
  return { session, plan };
}

/**
 * The request every route is sent before its own tools are placed: the tools the gateway runs
 * offered as functions of the model's own, and the drop report's entries for optional ones no
 * route runs.
 */
export function addServerToolDefinitions(
  request: CanonicalRequest,
  prepared: PreparedServerTools,
): CanonicalRequest {
  let upstreamRequest = request;
  if (prepared.session !== undefined) {
    upstreamRequest = { ...request };
    upstreamRequest.tools = [...request.tools, ...prepared.session.definitions];
  }
  // A gateway without server tools: the client's own optional ones are left out on every route.
  if (prepared.leftOut !== undefined) {
    upstreamRequest = { ...upstreamRequest };
    upstreamRequest.leftOut = prepared.leftOut.map(describeLeftOut);
  }
  return upstreamRequest;
}

/**
 * The first round's request as each candidate is sent it: a route whose provider runs some of the
 * tools itself gets them as `nativeServerTools` and not their gateway definitions.
 */
export function createRouteRequests(
  request: CanonicalRequest,
  session: ServerToolSession | undefined,
  plan: NativeToolPlan | undefined,
): (candidate: RouteCandidate) => CanonicalRequest {
  if (plan === undefined) return () => request;
  const routed = new Map<RouteCandidate, CanonicalRequest>();
  return (candidate) => {
    let built = routed.get(candidate);
    if (built !== undefined) return built;
    const native = plan.toolsFor(candidate);
    const dropped = plan.droppedFor(candidate);
    if (native.length === 0 && dropped.length === 0) {
      built = request;
    } else {
      built = { ...request };
      if (native.length > 0) {
        const runsThere = new Set<string>(native.map((tool) => tool.tool));
        built.tools = request.tools.filter((tool) => !runsThere.has(session?.toolNamed(tool.name) ?? ""));
        built.nativeServerTools = native;
      }
      if (dropped.length > 0) built.leftOut = [...(request.leftOut ?? []), ...dropped.map(describeLeftOut)];
    }
    routed.set(candidate, built);
    return built;
  };
}

/**
 * The optional activations this gateway cannot run (a client's default tool, never one asked
 * through `plugins`, with no `engine` option): not configured here, or no server tools at all.
 */
function findDroppable(
  activations: readonly ServerToolActivation[],
  serverTools: ServerTools | undefined,
): Set<ServerToolId> {
  const droppable = new Set<ServerToolId>();
  for (const activation of activations) {
    const engine = activation.parameters?.engine;
    if (activation.optional !== true || (engine !== undefined && engine !== null)) continue;
    if (serverTools?.runs(activation.id) !== true) droppable.add(activation.id);
  }
  return droppable;
}

/** `tools[7](web_search)`: how the drop report names a server tool a route goes without. */
function describeLeftOut(activation: ServerToolActivation): LostPart {
  return { param: activation.param ?? "tools", kind: activation.id };
}

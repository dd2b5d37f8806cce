/**
 * web_search for one request: the activation's options (context size, location, domains, count)
 * checked once, each call merged with the model's own arguments and sent to the default backend.
 * A backend failure is a result the model reads (the answer goes on) and costs nothing.
 */
import type { ServerToolActivation, ServerToolErrorCode } from "../../canonical/index.js";
import {
  buildSearchQuery,
  createWebSearchToolDefinition,
  parseWebSearchToolInput,
  renderSearchOutcomeForModel,
  resolveWebSearchActivation,
  type SearchFailure,
  type WebSearchBackends,
} from "../web-search/index.js";
import { createActivationError, type PreparedTool, readArgumentsObject } from "./prepared-tool.js";

/** The result's header and footer lines beyond the configured text budget. */
const RESULT_OVERHEAD_TOKENS = 200;

export function prepareWebSearchTool(
  activation: ServerToolActivation,
  backends: WebSearchBackends | undefined,
): PreparedTool {
  if (backends === undefined) {
    throw createActivationError(
      activation,
      "The web_search server tool is not configured on this gateway (server_tools.web_search.backends)",
    );
  }
  const backend = backends.defaultBackend;
  if (!backend.configured) {
    throw createActivationError(
      activation,
      `The web_search server tool cannot search on this gateway: ${backends.missingConfiguration.join("; ")}`,
    );
  }
  const resolved = resolveWebSearchActivation(activation.parameters, backends.maxResultCount);
  if (!resolved.ok) {
    throw createActivationError(
      activation,
      `web_search ${resolved.param} ${resolved.message}`,
      resolved.param,
    );
  }
  const { options } = resolved;
  return {
    definition: createWebSearchToolDefinition(backends.maxResultCount),
    maxCallCostMicroUsd: backend.pricePerCallMicroUsd,
    maxResultTokens: backends.maxResultTextChars + RESULT_OVERHEAD_TOKENS,
    readInput: readArgumentsObject,
    async execute(argumentsJson, signal) {
      const parsed = parseWebSearchToolInput(argumentsJson);
      if (!parsed.ok) {
        return {
          error: { code: "invalid_input", message: parsed.message },
          costMicroUsd: 0,
          forModel: parsed.message,
        };
      }
      const outcome = await backend.search(buildSearchQuery(options, parsed.input), signal);
      const forModel = renderSearchOutcomeForModel(outcome, backends.maxResultTextChars);
      if (!outcome.ok) {
        // The model's sentence says what failed without naming configuration; so does the event.
        return {
          error: { code: classifySearchFailure(outcome), message: forModel },
          costMicroUsd: 0,
          forModel,
        };
      }
      return {
        output: {
          kind: "search",
          query: outcome.query,
          sources: outcome.results.map((result) => ({
            url: result.url,
            title: result.title,
            snippet: result.snippet,
            pageAge: result.pageAge,
          })),
        },
        costMicroUsd: outcome.costMicroUsd,
        forModel,
      };
    },
  };
}

function classifySearchFailure(failure: SearchFailure): ServerToolErrorCode {
  if (failure.reason === "invalid_input") return "invalid_input";
  if (failure.reason === "http_status" && failure.status === 429) return "too_many_requests";
  return "unavailable";
}

/** Public surface of the web_search server tool (what the tool loop and the config loader use). */

export {
  type WebSearchConfigFile,
  webSearchConfigSchema,
} from "../../config/server-tools/web-search-config.js";
export {
  type CreateWebSearchBackendsOptions,
  createWebSearchBackends,
  type WebSearchBackends,
} from "./create-web-search-backends.js";
export { getDomainHost, isUrlPermitted, isUrlUnderDomain, normalizeDomain } from "./domain-filter.js";
export { CONTEXT_SIZE_LIMITS, MAX_QUERY_CHARS, MAX_QUERY_WORDS, MAX_RESULT_COUNT } from "./plan-search.js";
export { renderSearchOutcomeForModel } from "./render-search-outcome.js";
export {
  buildSearchQuery,
  type ResolveWebSearchActivationResult,
  resolveWebSearchActivation,
  type WebSearchActivationOptions,
} from "./resolve-web-search-activation.js";
export type * from "./search-types.js";
export {
  createWebSearchToolDefinition,
  type ParseWebSearchToolInputResult,
  parseWebSearchToolInput,
  readDomainList,
  WEB_SEARCH_TOOL_NAME,
  type WebSearchToolInput,
} from "./web-search-tool-definition.js";

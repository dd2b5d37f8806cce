/**
 * web_fetch: the outbound fetcher that is safe by construction (`fetchSafely`, also for other
 * fetched URLs such as PDF `file_url`s) and the web_fetch tool built on it. docs/server-tools.md
 * states every rule, cap and default.
 */

export {
  defaultHtmlConversionSettings,
  HTML_CONVERSION_DEFAULTS,
  type HtmlConversionConfigFile,
  type HtmlConversionSettings,
  htmlConversionConfigSchema,
} from "../../config/server-tools/html-conversion-config.js";
export {
  defaultWebFetchSettings,
  toWebFetchSettings,
  UNSAFE_LOOPBACK_WARNING,
  type WarningSink,
  WEB_FETCH_DEFAULTS,
  type WebFetchConfigFile,
  type WebFetchSettings,
  warnIfWebFetchUnsafe,
  webFetchConfigSchema,
} from "../../config/server-tools/web-fetch-config.js";
export { type AddressVerdict, checkAddress, checkHostName } from "./address-policy.js";
export { checkFetchUrl, MAX_URL_LENGTH } from "./check-fetch-url.js";
export { type ContentKind, type ContentType, classifyMediaType } from "./content-type.js";
export {
  executeWebFetch,
  type WebFetchContext,
  type WebFetchFailure,
  type WebFetchFailureReason,
  type WebFetchInput,
  type WebFetchResult,
  type WebFetchSuccess,
} from "./execute-web-fetch.js";
export type { FetchFailure, FetchFailureReason } from "./fetch-failure.js";
export {
  FETCH_USER_AGENT,
  type FetchNetwork,
  fetchSafely,
  type SafeFetchOptions,
  type SafeFetchResponse,
  type SafeFetchResult,
  type SafeFetchSettings,
} from "./fetch-safely.js";
export { formatWebFetchResultForModel } from "./format-web-fetch-result.js";
export {
  createHtmlConverter,
  getSharedHtmlConverter,
  type HtmlConversion,
  type HtmlConversionFailure,
  type HtmlConversionJob,
  type HtmlConverter,
  type HtmlConverterStats,
} from "./html-conversion-pool.js";
export type { SocketOpener, VettedTarget } from "./pinned-connector.js";
export {
  createHostResolver,
  HostResolutionError,
  type HostResolver,
  type HostResolverOptions,
} from "./resolve-host.js";
export {
  CONTENT_BYTES_PER_TOKEN,
  contentByteBudget,
  truncateToTokenBudget,
} from "./truncate-to-token-budget.js";
export {
  readWebFetchArguments,
  WEB_FETCH_TOOL_DEFINITION,
  WEB_FETCH_TOOL_NAME,
  type WebFetchArguments,
} from "./web-fetch-tool-definition.js";

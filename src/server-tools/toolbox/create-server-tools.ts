/**
 * The server tools this gateway runs, built once from the config (web_search backends with their
 * keys from the environment, web_fetch settings, datetime), and prepared per request for the
 * engine's tool loop (engine/ports.ts `ServerTools`). `pdf` and `image` are not offered to models
 * yet: activating them is refused with a message that says so, never silently ignored.
 */
import type { CanonicalRequest, ServerToolActivation, ServerToolId } from "../../canonical/index.js";
import type { ServerToolSession, ServerTools } from "../../engine/ports.js";
import type { DatetimeConfigFile } from "../datetime/index.js";
import { type FetchNetwork, toWebFetchSettings, type WebFetchConfigFile } from "../web-fetch/index.js";
import {
  createWebSearchBackends,
  MAX_RESULT_COUNT,
  type WebSearchBackends,
  type WebSearchConfigFile,
} from "../web-search/index.js";
import { describeNativeTool } from "./describe-native-tool.js";
import { prepareDatetimeTool } from "./prepare-datetime-tool.js";
import { prepareWebFetchTool } from "./prepare-web-fetch-tool.js";
import { prepareWebSearchTool } from "./prepare-web-search-tool.js";
import { createActivationError, type PreparedTool } from "./prepared-tool.js";

export interface ServerToolsConfig {
  webSearch?: WebSearchConfigFile;
  webFetch: WebFetchConfigFile;
  datetime: DatetimeConfigFile;
}

export interface ServerToolsOptions {
  /** Where API keys are read from (once, now). */
  env: Readonly<Record<string, string | undefined>>;
  /** Clock of the datetime tool; default the system clock. */
  now?: () => Date;
  /** web_fetch's resolver and socket opener; tests pass loopback ones. */
  fetchNetwork?: FetchNetwork;
}

export interface GatewayServerTools extends ServerTools {
  /** One line per tool setting that keeps a tool from working, for the start-up log. */
  readonly missingConfiguration: readonly string[];
  close(): Promise<void>;
}

export function createServerTools(
  config: ServerToolsConfig,
  options: ServerToolsOptions,
): GatewayServerTools {
  const backends: WebSearchBackends | undefined =
    config.webSearch === undefined ? undefined : createWebSearchBackends(config.webSearch, options.env);
  const fetchSettings = toWebFetchSettings(config.webFetch);
  const now = options.now ?? (() => new Date());

  const prepareOne = (activation: ServerToolActivation): PreparedTool => {
    switch (activation.id) {
      case "web_search":
        return prepareWebSearchTool(activation, backends);
      case "web_fetch":
        return prepareWebFetchTool(activation, fetchSettings, options.fetchNetwork);
      case "datetime":
        return prepareDatetimeTool(activation, config.datetime, now);
      case "pdf":
      case "image":
        throw createActivationError(
          activation,
          `The ${activation.id} server tool is not available on this gateway yet` +
            (activation.id === "pdf" ? "; PDFs sent as file parts reach models that read them" : ""),
        );
    }
  };

  return {
    missingConfiguration: backends?.missingConfiguration.map((line) => `web_search backend ${line}`) ?? [],
    runs(tool) {
      switch (tool) {
        case "web_search":
          return backends?.defaultBackend.configured === true;
        case "web_fetch":
          return fetchSettings.enabled;
        case "datetime":
          return config.datetime.enabled;
        default:
          return false;
      }
    },
    describeNative: (activation) =>
      describeNativeTool(activation, {
        maxResultCount: backends?.maxResultCount ?? MAX_RESULT_COUNT,
        maxContentTokens: fetchSettings.maxContentTokens,
      }),
    prepare(request: CanonicalRequest, native?: ReadonlySet<ServerToolId>): ServerToolSession {
      const tools = new Map<ServerToolId, PreparedTool>();
      const byName = new Map<string, ServerToolId>();
      for (const activation of request.serverTools) {
        if (native?.has(activation.id)) continue;
        const tool = prepareOne(activation);
        tools.set(activation.id, tool);
        byName.set(tool.definition.name, activation.id);
      }
      const get = (tool: ServerToolId): PreparedTool => {
        const prepared = tools.get(tool);
        if (prepared === undefined) throw new Error(`server tool ${tool} was not prepared`);
        return prepared;
      };
      return {
        definitions: [...tools.values()].map((tool) => tool.definition),
        toolNamed: (name) => byName.get(name),
        maxCallCostMicroUsd: (tool) => get(tool).maxCallCostMicroUsd,
        maxResultTokens: (tool) => get(tool).maxResultTokens,
        readInput: (tool, argumentsJson) => get(tool).readInput(argumentsJson),
        execute: (tool, argumentsJson, signal) => get(tool).execute(argumentsJson, signal),
      };
    },
    async close() {
      await backends?.close();
    },
  };
}

/**
 * The server tools this gateway runs, built once from the config (web_search backends and image
 * providers with their keys from the environment, web_fetch settings, datetime), and prepared per
 * request for the engine's tool loop (engine/ports.ts `ServerTools`). `pdf` is not offered to
 * models yet: activating it is refused with a message that says so, never silently ignored.
 */
import type { CanonicalRequest, ServerToolActivation, ServerToolId } from "../../canonical/index.js";
import type { ServerToolSession, ServerTools } from "../../engine/ports.js";
import type { DatetimeConfigFile } from "../datetime/index.js";
import { createImageGenerator, type ImageToolConfigFile, resolveImageToolSettings } from "../image/index.js";
import { type FetchNetwork, toWebFetchSettings, type WebFetchConfigFile } from "../web-fetch/index.js";
import {
  createWebSearchBackends,
  type WebSearchBackends,
  type WebSearchConfigFile,
} from "../web-search/index.js";
import { prepareDatetimeTool } from "./prepare-datetime-tool.js";
import { type ImageTool, prepareImageTool } from "./prepare-image-tool.js";
import { prepareWebFetchTool } from "./prepare-web-fetch-tool.js";
import { prepareWebSearchTool } from "./prepare-web-search-tool.js";
import { createActivationError, type PreparedTool } from "./prepared-tool.js";

export interface ServerToolsConfig {
  webSearch?: WebSearchConfigFile;
  webFetch: WebFetchConfigFile;
  datetime: DatetimeConfigFile;
  image?: ImageToolConfigFile;
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
  const image = config.image === undefined ? undefined : createImageTool(config.image, options.env);
  const now = options.now ?? (() => new Date());

  const prepareOne = (activation: ServerToolActivation): PreparedTool => {
    switch (activation.id) {
      case "web_search":
        return prepareWebSearchTool(activation, backends);
      case "web_fetch":
        return prepareWebFetchTool(activation, fetchSettings, options.fetchNetwork);
      case "datetime":
        return prepareDatetimeTool(activation, config.datetime, now);
      case "image":
        return prepareImageTool(activation, image);
      case "pdf":
        throw createActivationError(
          activation,
          "The pdf server tool is not available on this gateway yet; PDFs sent as file parts reach models that read them",
        );
    }
  };

  return {
    missingConfiguration: [
      ...(backends?.missingConfiguration.map((line) => `web_search backend ${line}`) ?? []),
      ...(image?.providers
        .filter((provider) => provider.apiKeyEnv !== undefined && provider.apiKey === undefined)
        .map(
          (provider) =>
            `image provider ${provider.id}: environment variable ${provider.apiKeyEnv} is not set`,
        ) ?? []),
    ],
    prepare(request: CanonicalRequest): ServerToolSession {
      const tools = new Map<ServerToolId, PreparedTool>();
      const byName = new Map<string, ServerToolId>();
      for (const activation of request.serverTools) {
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
      await Promise.all([backends?.close(), image?.generator.close()]);
    },
  };
}

function createImageTool(file: ImageToolConfigFile, env: ServerToolsOptions["env"]): ImageTool {
  const settings = resolveImageToolSettings(file, env);
  return { generator: createImageGenerator(settings), providers: settings.providers };
}

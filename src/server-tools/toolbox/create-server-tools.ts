/**
 * The server tools this gateway runs, built once from the config (web_search backends and image
 * providers with their keys from the environment, web_fetch settings, datetime, the PDF reader),
 * and prepared per request for the engine's tool loop (engine/ports.ts `ServerTools`). `pdf` is no
 * function the model calls: its activation sets how the request's PDFs are read (`documents`, the
 * `DocumentPreparer` port), and web_fetch reads a PDF it fetches with the same reader.
 */
import type { CanonicalRequest, ServerToolActivation, ServerToolId } from "../../canonical/index.js";
import type {
  DocumentPreparer,
  ServerToolCaller,
  ServerToolSession,
  ServerTools,
} from "../../engine/ports.js";
import type { DatetimeConfigFile } from "../datetime/index.js";
import { createDocumentPreparer, readPdfActivation } from "../documents/index.js";
import { createImageGenerator, type ImageToolConfigFile, resolveImageToolSettings } from "../image/index.js";
import {
  createPdfTextExtractor,
  type PdfExtractorStats,
  type PdfRequestOptions,
  type PdfTextExtractor,
  type PdfToolConfigFile,
  pdfToolConfigSchema,
  resolvePdfToolSettings,
} from "../pdf/index.js";
import {
  createHtmlConverter,
  type FetchNetwork,
  type HtmlConverterStats,
  toWebFetchSettings,
  type WebFetchConfigFile,
} from "../web-fetch/index.js";
import {
  createWebSearchBackends,
  MAX_RESULT_COUNT,
  type WebSearchBackends,
  type WebSearchConfigFile,
} from "../web-search/index.js";
import { describeNativeTool } from "./describe-native-tool.js";
import { prepareDatetimeTool } from "./prepare-datetime-tool.js";
import { type ImageTool, prepareImageTool } from "./prepare-image-tool.js";
import { prepareWebFetchTool } from "./prepare-web-fetch-tool.js";
import { prepareWebSearchTool } from "./prepare-web-search-tool.js";
import type { PreparedTool } from "./prepared-tool.js";

export interface ServerToolsConfig {
  webSearch?: WebSearchConfigFile;
  webFetch: WebFetchConfigFile;
  datetime: DatetimeConfigFile;
  /** Absent: the defaults (PDFs read for models that cannot read them, free). */
  pdf?: PdfToolConfigFile;
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
  /** The request's PDF file parts as each route reads them, with the same reader as web_fetch. */
  readonly documents: DocumentPreparer;
  /** The PDF reader's counters (parses, cache hits), for diagnostics. */
  pdfStats(): PdfExtractorStats;
  /** web_fetch's HTML conversion pool: workers, jobs running and waiting, workers terminated. */
  htmlConversionStats(): HtmlConverterStats;
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
  const extractor: PdfTextExtractor = createPdfTextExtractor(
    resolvePdfToolSettings(config.pdf ?? pdfToolConfigSchema.parse({})),
  );
  // One pool per gateway; its workers start with the first HTML page.
  const htmlConverter = createHtmlConverter(fetchSettings.htmlConversion);
  const documents = createDocumentPreparer({
    extractor,
    settings: fetchSettings,
    network: options.fetchNetwork,
  });

  const prepareOne = (
    activation: ServerToolActivation,
    pdf: PdfRequestOptions,
    caller: ServerToolCaller | undefined,
  ): PreparedTool => {
    switch (activation.id) {
      case "web_search":
        return prepareWebSearchTool(activation, backends);
      case "web_fetch":
        return prepareWebFetchTool(
          activation,
          fetchSettings,
          options.fetchNetwork,
          { extractor, options: pdf },
          // Fetches are shared out between keys; a request without a caller (a check) fetches nothing.
          { converter: htmlConverter, owner: caller?.keyId ?? "" },
        );
      case "datetime":
        return prepareDatetimeTool(activation, config.datetime, now);
      case "pdf":
        // `prepare` leaves pdf to `documents`: it has no function for the model.
        throw new Error("the pdf activation has no tool definition");
      case "image":
        return prepareImageTool(activation, image);
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
    documents,
    pdfStats: () => extractor.stats(),
    htmlConversionStats: () => htmlConverter.stats(),
    runs(tool) {
      switch (tool) {
        case "web_search":
          return backends?.defaultBackend.configured === true;
        case "web_fetch":
          return fetchSettings.enabled;
        case "datetime":
          return config.datetime.enabled;
        case "image":
          return image?.generator.configured === true;
        case "pdf":
          // PDFs are read here for every model that cannot read them: always available.
          return true;
        default:
          return false;
      }
    },
    describeNative: (activation) =>
      describeNativeTool(activation, {
        maxResultCount: backends?.maxResultCount ?? MAX_RESULT_COUNT,
        maxContentTokens: fetchSettings.maxContentTokens,
      }),
    prepare(
      request: CanonicalRequest,
      native?: ReadonlySet<ServerToolId>,
      caller?: ServerToolCaller,
    ): ServerToolSession {
      const tools = new Map<ServerToolId, PreparedTool>();
      const byName = new Map<string, ServerToolId>();
      const pdf = readPdfActivation(request, extractor.settings);
      for (const activation of request.serverTools) {
        // Not a function for the model: `documents` applies it to the request's file parts.
        if (activation.id === "pdf") continue;
        // Run at the provider on every route: nothing of the gateway's is needed.
        if (native?.has(activation.id)) continue;
        const tool = prepareOne(activation, pdf, caller);
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
      await Promise.all([
        backends?.close(),
        extractor.close(),
        image?.generator.close(),
        htmlConverter.close(),
      ]);
    },
  };
}

function createImageTool(file: ImageToolConfigFile, env: ServerToolsOptions["env"]): ImageTool {
  const settings = resolveImageToolSettings(file, env);
  return { generator: createImageGenerator(settings), providers: settings.providers };
}

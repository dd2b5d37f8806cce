/**
 * What `npm start` tells the person who ran it, and the first start's workspace.
 *
 * First start in embedded mode with an empty database: one default workspace with a little credit
 * and one ready-to-use key, so `npm start` is immediately useful (never in distributed mode). Its
 * `curl` example names a model that can answer: one whose provider has its API key. With no
 * provider key at all it says so, and how to set one, instead of an example bound to fail.
 *
 * Every start: which providers have no API key (their `api_key_env` is unset) and which catalog
 * models that leaves without any route that can answer. A start that printed no key says how to
 * mint one.
 */
import { isMissingProviderKey } from "../catalog/provider-key.js";
import type { CatalogModel, ProviderConfig } from "../catalog/types.js";
import type { GatewayConfig } from "../config/gateway-config.js";
import type { AdminStore } from "./ports.js";

/** Shown in the text where the listening address goes; main.ts fills it in once it is known. */
export const HOST_PORT_PLACEHOLDER = "HOST_PORT";
/** The models named per provider; the rest are counted. */
const LISTED_MODELS = 6;

export interface FirstStart {
  workspaceId: string;
  secret: string;
}

/** Creates the default workspace and its key when the database is empty; undefined otherwise. */
export async function bootstrapEmbeddedWorkspace(
  store: Pick<AdminStore, "workspaces" | "apiKeys">,
  config: GatewayConfig,
): Promise<FirstStart | undefined> {
  if ((await store.workspaces.count()) > 0) return undefined;
  const workspace = await store.workspaces.create({
    name: "default",
    creditsMicroUsd: config.defaultWorkspaceCreditsMicroUsd,
    invoicing: false,
  });
  const { secret } = await store.apiKeys.create({ workspaceId: workspace.id, name: "default" });
  return { workspaceId: workspace.id, secret };
}

/** The start text: the first start's key and example, the providers without a key, how to mint a key. */
export async function describeStart(
  store: Pick<AdminStore, "workspaces" | "apiKeys">,
  config: GatewayConfig,
  firstStart: FirstStart | undefined,
): Promise<string> {
  const sections: string[][] = [];
  if (firstStart !== undefined) sections.push(describeFirstStart(config, firstStart));
  const missing = describeMissingProviderKeys(config);
  if (missing.length > 0) sections.push(missing);
  const demo = describeDemoProviders(config);
  if (demo.length > 0) sections.push(demo);
  if (firstStart === undefined) {
    const [oldest] = await store.workspaces.list({ limit: 1 });
    sections.push(describeKeyMinting(oldest?.id));
  }
  return ["", ...sections.flatMap((lines) => [...lines, ""])].join("\n");
}

function describeFirstStart(config: GatewayConfig, { workspaceId, secret }: FirstStart): string[] {
  const credits = (config.defaultWorkspaceCreditsMicroUsd / 1_000_000).toFixed(2);
  const lines = [
    `Created workspace "default" (${workspaceId}) with $${credits} of credit and this API key.`,
    "It is shown once; store it now:",
    "",
    `  ${secret}`,
    "",
  ];
  const ready = pickExampleModel(config.models.filter(canAnswer));
  if (ready !== undefined) return [...lines, "Try it:", "", ...formatCurlExample(secret, ready.slug)];
  // No model can answer, so every route's provider names a key variable that is unset.
  const example = pickExampleModel(config.models);
  if (example === undefined) return lines;
  return [
    ...lines,
    "No provider API key is set, so no model can answer yet (a request fails with 502 provider_auth,",
    "naming the variable to set, and nothing is sent upstream).",
    `Set one (${listKeyVariables(config.providers).join(", ")}) and start the gateway again, e.g.:`,
    "",
    `  export ${example.routes[0].provider.apiKeyEnv}=…`,
    "  npm start",
    "",
    "Then try it:",
    "",
    ...formatCurlExample(secret, example.slug),
    "",
    ...DEMO_HINT,
  ];
}

/** How to try the gateway with no provider account (docs/providers.md, "Demo provider"). */
const DEMO_HINT = [
  "To try the gateway without any provider account, start it on the demo catalog, whose models",
  "answer locally: GATEWAY_CONFIG=config/demo.yaml npm start",
];

function formatCurlExample(secret: string, model: string): string[] {
  return [
    `  curl -s http://${HOST_PORT_PLACEHOLDER}/api/v1/chat/completions \\`,
    `    -H "Authorization: Bearer ${secret}" -H "Content-Type: application/json" \\`,
    `    -d '{"model":"${model}","messages":[{"role":"user","content":"Hello!"}]}'`,
  ];
}

/** One line per provider whose key variable is unset, with the catalog models left unable to answer. */
export function describeMissingProviderKeys(config: GatewayConfig): string[] {
  const lines: string[] = [];
  for (const provider of config.providers) {
    if (!isMissingProviderKey(provider)) continue;
    const stranded = config.models
      .filter((model) => model.routes.some((route) => route.provider === provider) && !canAnswer(model))
      .map((model) => model.slug);
    const listed = stranded.slice(0, LISTED_MODELS).join(", ");
    const more = stranded.length > LISTED_MODELS ? ` and ${stranded.length - LISTED_MODELS} more` : "";
    lines.push(
      `No API key for provider "${provider.id}" (${provider.apiKeyEnv} is unset): ` +
        (stranded.length === 0
          ? "every model it serves has another route."
          : `${stranded.length} model${stranded.length === 1 ? "" : "s"} cannot answer: ${listed}${more}.`),
    );
  }
  return lines;
}

/** A demo provider answers in the gateway: said at every start, so nobody mistakes it for a model. */
function describeDemoProviders(config: GatewayConfig): string[] {
  return config.providers
    .filter((provider) => provider.kind === "demo")
    .map((provider) => {
      const models = config.models
        .filter((model) => model.routes.some((route) => route.provider === provider))
        .map((model) => model.slug);
      return (
        `Provider "${provider.id}" is the local demo: ${models.join(", ") || "no model"} ` +
        "answer with an echo made by the gateway; no upstream is called."
      );
    });
}

function describeKeyMinting(workspaceId: string | undefined): string[] {
  return workspaceId === undefined
    ? [
        "To mint an API key, create a workspace, then a key for it:",
        "  npm run admin -- workspace create --name <name> --credits <USD>",
        "  npm run admin -- key create --workspace <workspace-id>",
      ]
    : [
        "To mint an API key (shown once):",
        `  npm run admin -- key create --workspace ${workspaceId}`,
        "  (other workspaces: npm run admin -- workspace list)",
      ];
}

/** A model can answer when one of its routes goes to a provider that needs no key or has it. */
function canAnswer(model: CatalogModel): boolean {
  return model.routes.some((route) => !isMissingProviderKey(route.provider));
}

function listKeyVariables(providers: readonly ProviderConfig[]): string[] {
  return [...new Set(providers.filter(isMissingProviderKey).map((provider) => provider.apiKeyEnv as string))];
}

/** The cheapest model by output price, for the example. */
function pickExampleModel(models: readonly CatalogModel[]): CatalogModel | undefined {
  let cheapest: CatalogModel | undefined;
  for (const model of models) {
    if (cheapest === undefined || model.prices.completionPicoUsd < cheapest.prices.completionPicoUsd) {
      cheapest = model;
    }
  }
  return cheapest;
}

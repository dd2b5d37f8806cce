/**
 * First start in embedded mode with an empty database: one default workspace with a little
 * credit and one ready-to-use key, so `npm start` is immediately useful. Never in distributed mode.
 */
import type { GatewayConfig } from "../config/types.js";
import type { Store } from "../storage/types.js";

/** Returns the announcement text when it created something, else undefined. */
export async function bootstrapEmbeddedWorkspace(
  store: Store,
  config: GatewayConfig,
): Promise<string | undefined> {
  if ((await store.workspaces.count()) > 0) return undefined;
  const workspace = await store.workspaces.create({
    name: "default",
    creditsMicroUsd: config.defaultWorkspaceCreditsMicroUsd,
    invoicing: false,
  });
  const { secret } = await store.apiKeys.create({ workspaceId: workspace.id, name: "default" });
  const model = pickExampleModel(config);
  const credits = (config.defaultWorkspaceCreditsMicroUsd / 1_000_000).toFixed(2);
  return [
    "",
    `Created workspace "default" (${workspace.id}) with $${credits} of credit and this API key.`,
    "It is shown once; store it now:",
    "",
    `  ${secret}`,
    "",
    "Try it (set the provider's API key first, e.g. export OPENAI_API_KEY=…):",
    "",
    `  curl -s http://HOST_PORT/api/v1/chat/completions \\`,
    `    -H "Authorization: Bearer ${secret}" -H "Content-Type: application/json" \\`,
    `    -d '{"model":"${model}","messages":[{"role":"user","content":"Hello!"}]}'`,
    "",
  ].join("\n");
}

/** The curl example uses the cheapest model whose provider key is set (else the cheapest overall). */
function pickExampleModel(config: GatewayConfig): string {
  const byPrice = [...config.models].sort((a, b) =>
    a.prices.completionPicoUsd === b.prices.completionPicoUsd
      ? 0
      : a.prices.completionPicoUsd < b.prices.completionPicoUsd
        ? -1
        : 1,
  );
  const ready = byPrice.find((model) => model.routes.some((route) => route.provider.apiKey !== undefined));
  return (ready ?? byPrice[0]).slug;
}

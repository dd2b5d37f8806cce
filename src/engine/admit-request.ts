/**
 * Admission: the checks that decide whether a request may reach an upstream at all. Order:
 * model exists → key allowlist → workspace lock → balance (spec §5; the order is ours, documented
 * in docs/architecture.md).
 */
import type { CanonicalRequest } from "../canonical/index.js";
import type { CatalogModel, GatewayConfig } from "../config/types.js";
import { GatewayError } from "../errors/gateway-error.js";
import type { ApiKeyWithWorkspace, Store, Workspace } from "../storage/types.js";

export interface Admission {
  model: CatalogModel;
  workspace: Workspace;
}

export function resolveModel(config: GatewayConfig, slug: string): CatalogModel {
  const model = config.modelsBySlug.get(slug);
  if (!model) {
    throw GatewayError.invalidRequest(
      `Unknown model "${slug}". GET /api/v1/models lists the available models.`,
      "model",
    );
  }
  return model;
}

export async function admitRequest(
  config: GatewayConfig,
  store: Store,
  caller: ApiKeyWithWorkspace,
  request: CanonicalRequest,
): Promise<Admission> {
  const model = resolveModel(config, request.model);
  const allowed = caller.key.allowedModels;
  if (allowed && allowed.length > 0 && !allowed.includes(model.slug)) {
    throw new GatewayError("model_not_allowed", `This API key may not use model "${model.slug}"`, {
      param: "model",
    });
  }
  // Read fresh: balance and lock change with every settled request and admin action, while the
  // authenticated key record may be a few seconds old.
  const workspace = (await store.workspaces.get(caller.workspace.id)) ?? caller.workspace;
  if (workspace.locked) throw new GatewayError("workspace_locked", "This workspace is locked");
  if (!workspace.invoicing && workspace.balanceMicroUsd <= 0) {
    throw new GatewayError(
      "insufficient_credits",
      "The workspace has no credit left; add credits to continue",
    );
  }
  return { model, workspace };
}

/** The cap sent upstream: the caller's cap, never above the model's maximum output. */
export function resolveOutputCap(model: CatalogModel, requested: number | undefined): number {
  return requested === undefined ? model.maxOutputTokens : Math.min(requested, model.maxOutputTokens);
}

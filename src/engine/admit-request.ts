/**
 * Admission: the checks that decide whether a request may reach an upstream at all. Order:
 * model exists → key allowlist → workspace lock → balance → spend and rate limits (the
 * order is documented in docs/architecture.md). This file holds the checks that need no
 * shared state; the limits are `SpendGuard.admit` (src/limits), called by the engine right after.
 */

import type { ApiKeyWithWorkspace, Workspace } from "../auth/accounts.js";
import type { CanonicalRequest } from "../canonical/index.js";
import type { CatalogModel, GatewayConfig } from "../config/types.js";
import { GatewayError } from "../errors/gateway-error.js";
import type { KeyLimits } from "../limits/ports.js";
import type { AdmissionSnapshots } from "./admission-snapshots.js";

export interface Admission {
  model: CatalogModel;
  workspace: Workspace;
  limits: KeyLimits;
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
  snapshots: AdmissionSnapshots,
  caller: ApiKeyWithWorkspace,
  request: CanonicalRequest,
): Promise<Admission> {
  const model = resolveModel(config, request.model);
  // Limits, allowlist and lock as of the last announced change (admission-snapshots.ts); the balance
  // here is only a first answer, the limit counters decide exactly.
  const fresh = await snapshots.read(caller.key.id);
  if (!fresh) throw new GatewayError("invalid_api_key", "Unknown API key");
  const allowed = fresh.allowedModels;
  if (allowed && allowed.length > 0 && !allowed.includes(model.slug)) {
    throw new GatewayError("model_not_allowed", `This API key may not use model "${model.slug}"`, {
      param: "model",
    });
  }
  const { workspace } = fresh;
  if (workspace.locked) throw new GatewayError("workspace_locked", "This workspace is locked");
  if (!workspace.invoicing && workspace.balanceMicroUsd <= 0) {
    throw new GatewayError(
      "insufficient_credits",
      "The workspace has no credit left; add credits to continue",
    );
  }
  return { model, workspace, limits: fresh.limits };
}

/** The cap sent upstream: the caller's cap, never above the model's maximum output. */
export function resolveOutputCap(model: CatalogModel, requested: number | undefined): number {
  return requested === undefined ? model.maxOutputTokens : Math.min(requested, model.maxOutputTokens);
}

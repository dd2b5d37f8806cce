/**
 * Admission: the checks that decide whether a request may reach an upstream at all. Order:
 * model (and each alternative it names) resolves to a catalog model → key allowlist (all of them,
 * by slug) → workspace lock → balance → spend and rate limits (the order is documented in
 * docs/architecture.md). This file holds the checks that need no shared state; the limits are
 * `SpendGuard.admit` (src/limits), called by the engine right after. The balance check is its own
 * function (`refuseWithoutCredit`), since a response-cache hit skips it.
 */

import type { Workspace } from "../auth/accounts.js";
import type { CanonicalRequest } from "../canonical/index.js";
import { resolveModelName } from "../catalog/resolve-model-name.js";
import type { CatalogModel } from "../catalog/types.js";
import type { GatewayConfig } from "../config/gateway-config.js";
import { GatewayError } from "../errors/gateway-error.js";
import type { KeyLimits } from "../limits/ports.js";
import type { AdmittedCaller } from "./ports.js";

export interface Admission {
  model: CatalogModel;
  /** The requested model, then each alternative the request named, all on the key's allowlist. */
  models: CatalogModel[];
  workspace: Workspace;
  limits: KeyLimits;
}

/**
 * A requested name (slug, alias, bare model name, operator alias) → its catalog model; every
 * later check (allowlist, limits, the record) uses the model's slug, never the name as sent.
 */
export function resolveModel(config: GatewayConfig, name: string, param = "model"): CatalogModel {
  return resolveModelName(config.modelNames, name, param);
}

export function admitRequest(
  config: GatewayConfig,
  caller: AdmittedCaller,
  request: CanonicalRequest,
): Admission {
  const model = resolveModel(config, request.model);
  const alternatives = (request.models ?? []).map((name, index) =>
    resolveModel(config, name, `models[${index}]`),
  );
  // Allowlist, lock and limits as the authenticator's cache has them (one cache of key state); the
  // balance here is only a first answer, the limit counters decide exactly.
  const allowed = caller.key.allowedModels;
  if (allowed && allowed.length > 0) {
    // Every candidate is checked before anything is sent, so a fallback never escapes the allowlist.
    // Checked against the resolved slug: a name is allowed exactly when the model it names is.
    if (!allowed.includes(model.slug)) throw createNotAllowedError(model.slug, request.model, "model");
    alternatives.forEach((alternative, index) => {
      if (!allowed.includes(alternative.slug)) {
        throw createNotAllowedError(
          alternative.slug,
          request.models?.[index] ?? alternative.slug,
          `models[${index}]`,
        );
      }
    });
  }
  const { workspace } = caller;
  if (workspace.locked) throw new GatewayError("workspace_locked", "This workspace is locked");
  const models = [model];
  for (const alternative of alternatives) if (!models.includes(alternative)) models.push(alternative);
  return { model, models, workspace, limits: caller.limits };
}

/**
 * The balance's first answer (the limit counters decide exactly): a workspace without credit is
 * refused before anything is reserved. The engine asks it after the checks above, and a request
 * the response cache answers never asks it: a hit costs nothing.
 */
export function refuseWithoutCredit(workspace: Workspace): void {
  if (!workspace.invoicing && workspace.balanceMicroUsd <= 0) {
    throw new GatewayError(
      "insufficient_credits",
      "The workspace has no credit left; add credits to continue",
    );
  }
}

/** `model_not_allowed` for a model the key may not use, saying the name it was asked by. */
export function createNotAllowedError(slug: string, requested: string, param: string): GatewayError {
  const named = requested === slug ? "" : ` (requested as "${requested}")`;
  return new GatewayError("model_not_allowed", `This API key may not use model "${slug}"${named}`, { param });
}

/** The cap sent upstream: the caller's cap, never above the model's maximum output. */
export function resolveOutputCap(model: CatalogModel, requested: number | undefined): number {
  return requested === undefined ? model.maxOutputTokens : Math.min(requested, model.maxOutputTokens);
}

/**
 * The map from every name a request may use to its catalog model, built once at load so that
 * resolving a request's model is one lookup (docs/configuration.md, "Model names"). A name that
 * would be ambiguous or would take another model's name stops the load with the field named.
 */

import type { CatalogModel, ModelNames } from "../catalog/types.js";
import type { GatewayConfigFile } from "./config-schema.js";

export class ModelNameError extends Error {
  override name = "ModelNameError";
}

type OperatorAliases = GatewayConfigFile["aliases"];

/** Who holds an explicit name: its model, and the field that gave it (for the collision message). */
interface Claim {
  model: CatalogModel;
  field: string;
}

/**
 * `models[i]` is the catalog's i-th model, as the file lists it. Appends the operator's names to
 * the `aliases` of the model each stands for. Throws `ModelNameError` naming the field.
 */
export function buildModelNames(
  models: readonly CatalogModel[],
  operatorAliases: OperatorAliases,
): ModelNames {
  const slugs = new Map<string, CatalogModel>();
  const parts = new Map<string, CatalogModel[]>();
  for (const model of models) {
    slugs.set(model.slug, model);
    const part = modelPartOf(model.slug);
    const sharers = parts.get(part);
    if (sharers === undefined) parts.set(part, [model]);
    else sharers.push(model);
  }

  const claims = new Map<string, Claim>();
  const claim = (name: string, model: CatalogModel, field: string): void => {
    const held = claims.get(name);
    if (held !== undefined && held.model !== model) {
      throw new ModelNameError(
        `${field}: "${name}" already names ${held.model.slug} (${held.field}); a name may stand for one model only`,
      );
    }
    // A slug's model part may be taken by an explicit name only for a model that has that part
    // (to settle which of them it means), never for another model.
    const sharers = parts.get(name);
    if (sharers !== undefined && !sharers.includes(model)) {
      throw new ModelNameError(
        `${field}: "${name}" is the model part of ${sharers.map((sharer) => sharer.slug).join(", ")}; an alias may not take another model's name`,
      );
    }
    if (held === undefined) claims.set(name, { model, field });
  };

  models.forEach((model, modelIndex) => {
    const creator = creatorOf(model.slug);
    model.aliases.forEach((alias, aliasIndex) => {
      const field = `models[${modelIndex}].aliases[${aliasIndex}]`;
      claim(alias, model, field);
      // `<creator>/<alias>`, as clients that prefix every name with its vendor send it.
      const prefixed = `${creator}/${alias}`;
      if (!slugs.has(prefixed)) claim(prefixed, model, field);
    });
  });

  for (const [name, target] of Object.entries(operatorAliases)) {
    const field = `aliases.${name}`;
    if (slugs.has(name)) {
      throw new ModelNameError(`${field}: "${name}" is a catalog slug; an alias may not rename a model`);
    }
    const model = resolveOperatorTarget(models, slugs, target, field);
    claim(name, model, field);
    if (!model.aliases.includes(name)) model.aliases.push(name);
  }

  const byName = new Map<string, CatalogModel>(slugs);
  const ambiguous = new Map<string, readonly CatalogModel[]>();
  for (const [name, held] of claims) byName.set(name, held.model);
  for (const [part, sharers] of parts) {
    if (byName.has(part)) continue;
    if (sharers.length === 1) byName.set(part, sharers[0]);
    else ambiguous.set(part, sharers);
  }
  return { byName, ambiguous };
}

function resolveOperatorTarget(
  models: readonly CatalogModel[],
  slugs: ReadonlyMap<string, CatalogModel>,
  target: OperatorAliases[string],
  field: string,
): CatalogModel {
  if (typeof target === "string") {
    const model = slugs.get(target);
    if (model === undefined) throw new ModelNameError(`${field}: no catalog model has the slug "${target}"`);
    return model;
  }
  const newest = findNewestOfFamily(models, target.family);
  if (newest === undefined) {
    throw new ModelNameError(`${field}.family: no catalog model has the family "${target.family}"`);
  }
  return newest;
}

/**
 * The member with the latest release date (ISO dates compare as text; an empty date is the
 * oldest); between equal dates, the one listed first.
 */
export function findNewestOfFamily(
  models: readonly CatalogModel[],
  family: string,
): CatalogModel | undefined {
  let newest: CatalogModel | undefined;
  for (const model of models) {
    if (model.family !== family) continue;
    if (newest === undefined || model.releaseDate > newest.releaseDate) newest = model;
  }
  return newest;
}

function creatorOf(slug: string): string {
  return slug.slice(0, slug.indexOf("/"));
}

function modelPartOf(slug: string): string {
  return slug.slice(slug.indexOf("/") + 1);
}

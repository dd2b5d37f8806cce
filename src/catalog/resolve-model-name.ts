/**
 * A request's model name → its catalog model: one lookup in the map built at load
 * (build-model-names.ts). An unknown or ambiguous name is `invalid_request` naming the field,
 * with the closest catalog names or the slugs to choose from.
 */
import { GatewayError } from "../errors/gateway-error.js";
import { suggestModelNames } from "./suggest-model-names.js";
import type { CatalogModel, ModelNames } from "./types.js";

/** How much of an unknown name the error repeats. */
const MAX_ECHOED_LENGTH = 200;
const SUGGESTION_COUNT = 3;

export function resolveModelName(names: ModelNames, name: string, param: string): CatalogModel {
  const model = names.byName.get(name);
  if (model !== undefined) return model;
  throw createModelNameError(names, name, param);
}

function createModelNameError(names: ModelNames, name: string, param: string): GatewayError {
  const candidates = names.ambiguous.get(name);
  if (candidates !== undefined) {
    return GatewayError.invalidRequest(
      `Model name "${name}" is ambiguous: it names ${candidates.map((model) => model.slug).join(", ")}. Send one of these slugs.`,
      param,
    );
  }
  const echoed = name.length > MAX_ECHOED_LENGTH ? `${name.slice(0, MAX_ECHOED_LENGTH)}…` : name;
  const closest = suggestModelNames(names, name, SUGGESTION_COUNT).map((suggestion) =>
    suggestion.slugs.length === 1 && suggestion.slugs[0] === suggestion.name
      ? suggestion.name
      : `${suggestion.name} (${suggestion.slugs.join(", ")})`,
  );
  const hint = closest.length === 0 ? "" : ` The closest catalog names: ${closest.join("; ")}.`;
  return GatewayError.invalidRequest(
    `Unknown model "${echoed}".${hint} GET /api/v1/models lists every model with its aliases.`,
    param,
  );
}

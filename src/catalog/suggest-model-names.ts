/**
 * The catalog names closest to an unknown one, for the error that refuses it. Runs only on that
 * error path; its work is bounded by the length cap on the name and the size of the catalog.
 */
import type { CatalogModel, ModelNames } from "./types.js";

/** Longer names are compared by their start only: no catalog name is this long. */
const MAX_COMPARED_LENGTH = 64;

export interface ModelNameSuggestion {
  /** The catalog name closest to the unknown one. */
  name: string;
  /** The slugs it stands for (several for a model part that slugs share). */
  slugs: string[];
}

/**
 * The `count` closest names, one per model, closest first: by edit distance relative to the
 * longer name (so a short name is not close to everything), case aside; ties: the shorter name.
 */
export function suggestModelNames(names: ModelNames, unknown: string, count: number): ModelNameSuggestion[] {
  const wanted = unknown.slice(0, MAX_COMPARED_LENGTH).toLowerCase();
  const scored: Array<{ name: string; models: readonly CatalogModel[]; distance: number }> = [];
  const measure = (name: string) =>
    measureEditDistance(wanted, name.toLowerCase()) / Math.max(wanted.length, name.length, 1);
  for (const [name, model] of names.byName) scored.push({ name, models: [model], distance: measure(name) });
  for (const [name, models] of names.ambiguous) scored.push({ name, models, distance: measure(name) });
  scored.sort((a, b) => a.distance - b.distance || a.name.length - b.name.length);
  const suggested = new Set<CatalogModel>();
  const suggestions: ModelNameSuggestion[] = [];
  for (const entry of scored) {
    if (suggestions.length === count) break;
    if (entry.models.every((model) => suggested.has(model))) continue;
    for (const model of entry.models) suggested.add(model);
    suggestions.push({ name: entry.name, slugs: entry.models.map((model) => model.slug) });
  }
  return suggestions;
}

/** Levenshtein distance: insertions, deletions and substitutions, one each. */
export function measureEditDistance(a: string, b: string): number {
  if (a === b) return 0;
  if (a.length === 0) return b.length;
  if (b.length === 0) return a.length;
  // Two rows of the table, typed so that the inner loop stays on small integers.
  let previous = new Uint32Array(b.length + 1);
  let current = new Uint32Array(b.length + 1);
  for (let j = 0; j <= b.length; j++) previous[j] = j;
  for (let i = 1; i <= a.length; i++) {
    current[0] = i;
    const code = a.charCodeAt(i - 1);
    for (let j = 1; j <= b.length; j++) {
      let best = previous[j - 1] + (code === b.charCodeAt(j - 1) ? 0 : 1);
      const deletion = previous[j] + 1;
      if (deletion < best) best = deletion;
      const insertion = current[j - 1] + 1;
      if (insertion < best) best = insertion;
      current[j] = best;
    }
    const swap = previous;
    previous = current;
    current = swap;
  }
  return previous[b.length];
}

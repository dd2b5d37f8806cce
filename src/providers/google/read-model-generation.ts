/**
 * What the upstream model id says about its Gemini generation. Two request rules differ between
 * generations and the catalog carries no field for them: Gemini 3+ takes `thinkingLevel` (2.5
 * takes `thinkingBudget`) and rejects a replayed function call without a thought signature. The
 * model id is the only source, so this is the one place that reads it; an id it cannot read
 * (aliases such as `gemini-flash-latest`, tuned models) counts as "not known to be 3+", which
 * selects the rules every generation accepts.
 */

/** `gemini-2.5-flash` → 2, `gemini-3.1-pro-preview` → 3, `models/gemini-3-flash` → 3; else undefined. */
export function readGeminiGeneration(upstreamModel: string): number | undefined {
  const match = /(?:^|\/)gemini-(\d+)(?:\.\d+)?(?:-|$)/i.exec(upstreamModel);
  return match === null ? undefined : Number(match[1]);
}

export function isGemini3OrLater(upstreamModel: string): boolean {
  return (readGeminiGeneration(upstreamModel) ?? 0) >= 3;
}

/** Gemini 2.5 Pro-class models cannot switch thinking off (budget 0 is a 400). */
export function isProModel(upstreamModel: string): boolean {
  return /(?:^|[-/])pro(?:-|$)/i.test(upstreamModel);
}

/**
 * Samples and their summary. Samples are kept whole (bounded) rather than bucketed: a run is at
 * most a few hundred thousand requests, and exact percentiles make "added 0.3 ms" trustworthy.
 */

/** Cap per sample set, far above any run (e.g. 20 s × 50,000 req/s); beyond it samples are dropped. */
export const MAX_SAMPLES = 1_000_000;

export class SampleSet {
  private readonly values: number[] = [];
  dropped = 0;

  add(value: number): void {
    if (this.values.length < MAX_SAMPLES) this.values.push(value);
    else this.dropped += 1;
  }

  addAll(other: SampleSet): void {
    for (const value of other.values) this.add(value);
    this.dropped += other.dropped;
  }

  get count(): number {
    return this.values.length;
  }

  summarise(): Summary | undefined {
    return summarise(this.values);
  }
}

export interface Summary {
  count: number;
  mean: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
}

export function summarise(values: readonly number[]): Summary | undefined {
  if (values.length === 0) return undefined;
  const sorted = Float64Array.from(values).sort();
  let total = 0;
  for (const value of sorted) total += value;
  return {
    count: sorted.length,
    mean: total / sorted.length,
    p50: percentile(sorted, 0.5),
    p90: percentile(sorted, 0.9),
    p99: percentile(sorted, 0.99),
    max: sorted[sorted.length - 1],
  };
}

/** Nearest-rank percentile of ascending values. */
export function percentile(sorted: Float64Array, fraction: number): number {
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil(fraction * sorted.length) - 1));
  return sorted[rank];
}

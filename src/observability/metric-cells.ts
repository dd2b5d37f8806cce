/**
 * Counters and histograms whose series are found by a key the caller builds from its label values,
 * registered with a prom-client registry as custom metrics (its `registerMetric` / `get()`
 * contract), so the registry renders them like its own. prom-client's own classes validate, sort
 * and hash the label object on every update; a request updates about ten series, after every
 * request, so the cells keep a Map from the joined label values instead, and `series` hands out a
 * series itself for a caller that keeps it (gateway-metrics.ts keeps those of a request's shape).
 *
 * Label values must not contain KEY_SEPARATOR (every value here comes from the catalog or a fixed
 * list, never from a caller's text).
 */
import type * as PromClient from "prom-client";
import type { Registry } from "./prom-client-classes.js";

/** Joins label values into a series key. */
const KEY_SEPARATOR = "\u0000";

type Labels<L extends string> = Readonly<Record<L, string>>;

/** What a registry reads off a custom metric: one value per line of the exposition. */
interface RenderedMetric {
  name: string;
  help: string;
  type: "counter" | "histogram";
  aggregator: "sum";
  values: Array<{ metricName?: string; labels: Readonly<Record<string, string | number>>; value: number }>;
}

/** One counter series: add to `value`. */
export interface CounterSeries {
  value: number;
}

interface CounterCell<L extends string> extends CounterSeries {
  labels: Labels<L>;
}

/** One histogram series. */
export class HistogramSeries<L extends string = string> {
  /** Observations per bucket (not cumulative); the last slot is +Inf. */
  readonly buckets: number[];
  sum = 0;
  count = 0;

  constructor(
    readonly labels: Labels<L>,
    private readonly upperBounds: readonly number[],
  ) {
    this.buckets = new Array<number>(upperBounds.length + 1).fill(0);
  }

  observe(value: number): void {
    if (!Number.isFinite(value)) return;
    const bounds = this.upperBounds;
    let slot = 0;
    while (slot < bounds.length && value > bounds[slot]) slot++;
    this.buckets[slot]++;
    this.sum += value;
    this.count++;
  }
}

interface MetricDefinition<L extends string> {
  name: string;
  help: string;
  labelNames: readonly L[];
  registers: readonly Registry[];
}

/** The key of a series: its label values in `labelNames` order. */
function seriesKey<L extends string>(labelNames: readonly L[], labels: Labels<L>): string {
  let key = labels[labelNames[0]];
  for (let index = 1; index < labelNames.length; index++) key += KEY_SEPARATOR + labels[labelNames[index]];
  return key;
}

export class CounterCells<L extends string> {
  readonly name: string;
  readonly help: string;
  private readonly labelNames: readonly L[];
  private readonly cells = new Map<string, CounterCell<L>>();

  constructor(definition: MetricDefinition<L>) {
    this.name = definition.name;
    this.help = definition.help;
    this.labelNames = definition.labelNames;
    for (const registry of definition.registers)
      registry.registerMetric(this as unknown as PromClient.Metric);
  }

  inc(labels: Labels<L>, by = 1): void {
    this.series(labels).value += by;
  }

  /** The series of `labels`, made (at 0) when it does not exist yet. */
  series(labels: Labels<L>): CounterSeries {
    const key = seriesKey(this.labelNames, labels);
    let cell = this.cells.get(key);
    if (cell === undefined) {
      cell = { labels: { ...labels }, value: 0 };
      this.cells.set(key, cell);
    }
    return cell;
  }

  /** prom-client's custom-metric contract: the current values. */
  get(): RenderedMetric {
    const values: RenderedMetric["values"] = [];
    // A series handed out and never added to is not shown, as if it had never been asked for.
    for (const cell of this.cells.values()) {
      if (cell.value !== 0) values.push({ labels: cell.labels, value: cell.value });
    }
    return { name: this.name, help: this.help, type: "counter", aggregator: "sum", values };
  }
}

export class HistogramCells<L extends string> {
  readonly name: string;
  readonly help: string;
  private readonly labelNames: readonly L[];
  private readonly upperBounds: readonly number[];
  private readonly cells = new Map<string, HistogramSeries<L>>();

  constructor(definition: MetricDefinition<L> & { buckets: readonly number[] }) {
    this.name = definition.name;
    this.help = definition.help;
    this.labelNames = definition.labelNames;
    this.upperBounds = [...definition.buckets].sort((a, b) => a - b);
    for (const registry of definition.registers)
      registry.registerMetric(this as unknown as PromClient.Metric);
  }

  observe(labels: Labels<L>, value: number): void {
    if (!Number.isFinite(value)) return;
    this.series(labels).observe(value);
  }

  /** The series of `labels`, made (empty) when it does not exist yet. */
  series(labels: Labels<L>): HistogramSeries<L> {
    const key = seriesKey(this.labelNames, labels);
    let cell = this.cells.get(key);
    if (cell === undefined) {
      cell = new HistogramSeries({ ...labels }, this.upperBounds);
      this.cells.set(key, cell);
    }
    return cell;
  }

  /** prom-client's custom-metric contract: cumulative buckets, sum and count per series. */
  get(): RenderedMetric {
    const values: RenderedMetric["values"] = [];
    const bucketName = `${this.name}_bucket`;
    for (const cell of this.cells.values()) {
      if (cell.count === 0) continue;
      let cumulative = 0;
      for (let index = 0; index <= this.upperBounds.length; index++) {
        cumulative += cell.buckets[index];
        // `le` after the series' own labels, as prom-client writes it.
        const labels: Record<string, string | number> = { ...cell.labels };
        labels.le = index < this.upperBounds.length ? this.upperBounds[index] : "+Inf";
        values.push({ metricName: bucketName, labels, value: cumulative });
      }
      values.push({ metricName: `${this.name}_sum`, labels: cell.labels, value: cell.sum });
      values.push({ metricName: `${this.name}_count`, labels: cell.labels, value: cell.count });
    }
    return {
      name: this.name,
      help: this.help,
      type: "histogram",
      aggregator: "sum",
      values,
    };
  }
}

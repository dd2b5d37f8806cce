// Latency and error rate per model and UTC day, beside the usage chart: one line per model (in
// the usage chart's colours), drawn as SVG here from the admin API's performance report. A day
// without requests of a model breaks its line rather than drawing through zero.
import { activity } from "./activity-api.js";
import { h, notice, replace, s } from "./dom.js";
import { formatCount } from "./format.js";

const DAY_MS = 86_400_000;
const CHART = { width: 920, height: 220, left: 64, right: 12, top: 12, bottom: 28 };
const FALLBACK_COLOR = "#7d8b99";
const LATENCIES = [
  ["latency_p50_ms", "p50"],
  ["latency_p95_ms", "p95"],
  ["latency_mean_ms", "Mean"],
];

/** An element that fills itself once the report arrives; `colors`: model → the usage chart's colour. */
export function renderPerformance({ workspace, days, colors }) {
  const element = h("div", { class: "performance" }, notice("Loading latency and errors…"));
  load(element, workspace, days, colors).catch((error) =>
    replace(element, notice(`Latency and errors could not be loaded: ${error.message}`, "error")),
  );
  return element;
}

async function load(element, workspace, days, colors) {
  const report = await activity.performance(workspace.id, days, "day");
  const start = Date.parse(report.since);
  const buckets = Array.from({ length: report.days }, (_, index) =>
    new Date(start + index * DAY_MS).toISOString().slice(0, 10),
  );
  const models = [...new Set(report.data.map((row) => row.model))];
  const colorOf = (model) => colors.get(model) ?? FALLBACK_COLOR;
  const byModel = new Map(models.map((model) => [model, new Map()]));
  for (const row of report.data) byModel.get(row.model).set(row.bucket.slice(0, 10), row);

  let latency = "latency_p50_ms";
  const latencyArea = h("div", { class: "chart-area" });
  const drawLatency = () =>
    replace(
      latencyArea,
      drawLines({
        buckets,
        byModel,
        colorOf,
        read: (row) => row[latency],
        label: (value) => `${formatCount(Math.round(value))} ms`,
        ariaLabel: `${latency} per day and model`,
        className: "latency-chart",
      }),
    );
  const picker = h(
    "div",
    { class: "segmented", role: "group", "aria-label": "Latency measure" },
    LATENCIES.map(([value, text]) => {
      const button = h("button", { type: "button", class: value === latency ? "active" : "secondary" }, text);
      button.addEventListener("click", () => {
        latency = value;
        for (const other of picker.children) other.className = other === button ? "active" : "secondary";
        drawLatency();
      });
      return button;
    }),
  );
  const totals = models.map((model) => {
    const rows = [...byModel.get(model).values()];
    const requests = rows.reduce((sum, row) => sum + row.requests, 0);
    const errors = rows.reduce((sum, row) => sum + row.errors, 0);
    return { model, requests, errors };
  });
  replace(
    element,
    h(
      "div",
      { class: "card" },
      h("div", { class: "chart-head" }, h("h2", null, "Latency of successful requests"), picker),
      latencyArea,
    ),
    h(
      "div",
      { class: "card" },
      h(
        "div",
        { class: "chart-head" },
        h("h2", null, "Error rate"),
        h("span", { class: "totals" }, "errors and interrupted requests, of all finished"),
      ),
      drawLines({
        buckets,
        byModel,
        colorOf,
        read: (row) => (row.requests === 0 ? null : row.error_rate * 100),
        label: (value) => `${value.toFixed(value < 10 && value !== 0 ? 1 : 0)}%`,
        ariaLabel: "error rate per day and model",
        className: "error-chart",
        floor: 5,
      }),
      h(
        "ul",
        { class: "legend" },
        totals.map(({ model, requests, errors }) =>
          h(
            "li",
            { "data-model": model },
            h("span", { class: "swatch", "data-color": colorOf(model) }),
            `${model}: ${formatCount(errors)} of ${formatCount(requests)} failed`,
          ),
        ),
      ),
    ),
  );
  // Swatch colours through the CSSOM: the page's policy allows no inline style attributes.
  for (const swatch of element.querySelectorAll(".swatch")) swatch.style.background = swatch.dataset.color;
  drawLatency();
}

/** One polyline per model over the day buckets; `floor`: the least top of the scale. */
function drawLines({ buckets, byModel, colorOf, read, label, ariaLabel, className, floor = 0 }) {
  const { width, height, left, right, top: padTop, bottom } = CHART;
  const values = [];
  for (const rows of byModel.values()) for (const row of rows.values()) values.push(read(row) ?? 0);
  const top = niceCeiling(Math.max(floor, ...values));
  const plotWidth = width - left - right;
  const plotHeight = height - padTop - bottom;
  const slot = plotWidth / buckets.length;
  const x = (index) => left + index * slot + slot / 2;
  const y = (value) => padTop + plotHeight - (top === 0 ? 0 : (value / top) * plotHeight);
  const grid = [0, 0.25, 0.5, 0.75, 1].map((fraction) =>
    s(
      "g",
      { class: "grid-line" },
      s("line", { x1: left, x2: width - right, y1: y(top * fraction), y2: y(top * fraction) }),
      s("text", { x: left - 6, y: y(top * fraction) + 4, "text-anchor": "end" }, label(top * fraction)),
    ),
  );
  const ticks = buckets.map((day, index) =>
    index % 5 === (buckets.length - 1) % 5
      ? s("text", { x: x(index), y: height - 8, "text-anchor": "middle", class: "day-label" }, day.slice(5))
      : null,
  );
  const series = [...byModel.entries()].map(([model, rows]) => {
    const color = colorOf(model);
    const runs = [];
    let run = [];
    const points = [];
    buckets.forEach((day, index) => {
      const row = rows.get(day);
      const value = row ? read(row) : null;
      if (value === null || value === undefined) {
        if (run.length > 0) runs.push(run);
        run = [];
        return;
      }
      run.push(`${x(index).toFixed(1)},${y(value).toFixed(1)}`);
      points.push(
        s(
          "circle",
          { cx: x(index), cy: y(value), r: 3, fill: color, "data-day": day },
          s("title", null, `${day} · ${model}: ${label(value)} (${formatCount(row.requests)} requests)`),
        ),
      );
    });
    if (run.length > 0) runs.push(run);
    return s(
      "g",
      { class: "series", "data-model": model },
      runs.map((line) =>
        s("polyline", { points: line.join(" "), fill: "none", stroke: color, "stroke-width": 2 }),
      ),
      points,
    );
  });
  return s(
    "svg",
    {
      viewBox: `0 0 ${width} ${height}`,
      class: `usage-chart ${className}`,
      role: "img",
      "aria-label": ariaLabel,
    },
    grid,
    s("line", { class: "axis", x1: left, x2: width - right, y1: y(0), y2: y(0) }),
    ticks,
    series,
  );
}

/** 1, 2, 2.5 or 5 times a power of ten, at or above `value` (0 stays 0). */
function niceCeiling(value) {
  if (value <= 0) return 0;
  const power = 10 ** Math.floor(Math.log10(value));
  for (const step of [1, 2, 2.5, 5, 10]) if (step * power >= value) return step * power;
  return 10 * power;
}

// A workspace's usage over the last 30 days: cost (or requests) per UTC day as stacked bars by
// model, drawn as SVG here, and the totals per model.
import { admin } from "./api.js";
import { h, notice, replace, s, table } from "./dom.js";
import { formatCount, formatUsd, formatUsdShort } from "./format.js";
import { renderPerformance } from "./performance-view.js";

const PALETTE = [
  "#2f6fdf",
  "#e07b39",
  "#3aa675",
  "#c24d7c",
  "#8a63d2",
  "#c9a227",
  "#3b9bb3",
  "#7d8b99",
  "#b5533c",
  "#5a7d2b",
];
const DAY_MS = 86_400_000;
const CHART = { width: 920, height: 280, left: 64, right: 12, top: 12, bottom: 28 };

export async function renderUsageTab(container, { workspace }) {
  replace(container, notice("Loading usage…"));
  const usage = await admin.usage(workspace.id, 30);
  const days = listDays(usage.since, usage.days);
  const models = summariseModels(usage.data);
  const colors = new Map(models.map((model, index) => [model.model, PALETTE[index % PALETTE.length]]));
  const chartArea = h("div", { class: "chart-area" });
  let metric = "cost";
  const draw = () => replace(chartArea, drawChart(days, usage.data, models, colors, metric));
  const metricPicker = h(
    "div",
    { class: "segmented", role: "group", "aria-label": "Measure" },
    [
      ["cost", "Cost"],
      ["requests", "Requests"],
    ].map(([value, label]) => {
      const button = h("button", { type: "button", class: value === metric ? "active" : "secondary" }, label);
      button.addEventListener("click", () => {
        metric = value;
        for (const other of metricPicker.children)
          other.className = other === button ? "active" : "secondary";
        draw();
      });
      return button;
    }),
  );
  const totalCost = models.reduce((sum, model) => sum + BigInt(model.cost), 0n);
  const totalRequests = models.reduce((sum, model) => sum + model.requests, 0);
  replace(
    container,
    h(
      "div",
      { class: "card" },
      h(
        "div",
        { class: "chart-head" },
        h("h2", null, `Last ${usage.days} days (UTC)`),
        h("span", { class: "totals" }, `${formatUsd(totalCost)} · ${formatCount(totalRequests)} requests`),
        metricPicker,
      ),
      chartArea,
      h(
        "ul",
        { class: "legend" },
        models.map((model) =>
          h("li", null, h("span", { class: "swatch", "data-color": colors.get(model.model) }), model.model),
        ),
      ),
    ),
    h("h3", null, "Per model"),
    table(
      ["Model", "Requests", "Prompt tokens", "Completion tokens", "Cost"],
      models.map((model) =>
        h(
          "tr",
          null,
          h("td", null, model.model),
          h("td", { class: "number" }, formatCount(model.requests)),
          h("td", { class: "number" }, formatCount(model.tokensPrompt)),
          h("td", { class: "number" }, formatCount(model.tokensCompletion)),
          h("td", { class: "money" }, formatUsd(model.cost)),
        ),
      ),
      { empty: "No requests in these 30 days." },
    ),
  );
  // Swatch colours are set through the CSSOM: the page's policy allows no inline style attributes.
  for (const swatch of container.querySelectorAll(".swatch")) swatch.style.background = swatch.dataset.color;
  draw();
  // Latency and error rate per model, in the same colours (performance-view.js).
  container.append(renderPerformance({ workspace, days: usage.days, colors }));
}

function listDays(sinceIso, count) {
  const start = Date.parse(sinceIso);
  return Array.from({ length: count }, (_, index) =>
    new Date(start + index * DAY_MS).toISOString().slice(0, 10),
  );
}

/** Models by total cost, highest first (their colours follow this order). */
function summariseModels(rows) {
  const byModel = new Map();
  for (const row of rows) {
    const entry = byModel.get(row.model) ?? {
      model: row.model,
      requests: 0,
      tokensPrompt: 0,
      tokensCompletion: 0,
      cost: 0n,
    };
    entry.requests += row.requests;
    entry.tokensPrompt += row.tokens_prompt;
    entry.tokensCompletion += row.tokens_completion;
    entry.cost += BigInt(row.cost_micro_usd);
    byModel.set(row.model, entry);
  }
  return [...byModel.values()].sort((a, b) =>
    b.cost > a.cost ? 1 : b.cost < a.cost ? -1 : b.requests - a.requests,
  );
}

function drawChart(days, rows, models, colors, metric) {
  const measure = (row) => (metric === "cost" ? Number(row.cost_micro_usd) : row.requests);
  const label = (value) => (metric === "cost" ? formatUsdShort(value) : formatCount(value));
  const exact = (row) =>
    metric === "cost" ? formatUsd(row.cost_micro_usd) : `${formatCount(row.requests)} requests`;
  const byDay = new Map(days.map((day) => [day, []]));
  for (const row of rows) byDay.get(row.day)?.push(row);
  const order = new Map(models.map((model, index) => [model.model, index]));
  const dayTotals = days.map((day) => byDay.get(day).reduce((sum, row) => sum + measure(row), 0));
  const top = niceCeiling(Math.max(0, ...dayTotals));

  const { width, height, left, right, top: padTop, bottom } = CHART;
  const plotWidth = width - left - right;
  const plotHeight = height - padTop - bottom;
  const slot = plotWidth / days.length;
  const barWidth = Math.max(2, slot * 0.7);
  const y = (value) => padTop + plotHeight - (top === 0 ? 0 : (value / top) * plotHeight);

  const grid = [0, 0.25, 0.5, 0.75, 1].map((fraction) => {
    const value = top * fraction;
    return s(
      "g",
      { class: "grid-line" },
      s("line", { x1: left, x2: width - right, y1: y(value), y2: y(value) }),
      s("text", { x: left - 6, y: y(value) + 4, "text-anchor": "end" }, label(value)),
    );
  });
  const bars = days.map((day, index) => {
    const x = left + index * slot + (slot - barWidth) / 2;
    let base = 0;
    const segments = byDay
      .get(day)
      .sort((a, b) => order.get(a.model) - order.get(b.model))
      .map((row) => {
        const value = measure(row);
        const rect = s(
          "rect",
          {
            x,
            y: y(base + value),
            width: barWidth,
            height: Math.max(0, y(base) - y(base + value)),
            fill: colors.get(row.model),
          },
          s("title", null, `${day} · ${row.model}: ${exact(row)}`),
        );
        base += value;
        return rect;
      });
    const tick =
      index % 5 === (days.length - 1) % 5
        ? s(
            "text",
            { x: x + barWidth / 2, y: height - 8, "text-anchor": "middle", class: "day-label" },
            day.slice(5),
          )
        : null;
    return s("g", { class: "day", "data-day": day }, segments, tick);
  });
  return s(
    "svg",
    {
      viewBox: `0 0 ${width} ${height}`,
      class: "usage-chart",
      role: "img",
      "aria-label": `${metric} per day and model`,
    },
    grid,
    s("line", { class: "axis", x1: left, x2: width - right, y1: y(0), y2: y(0) }),
    bars,
  );
}

/** 1, 2, 2.5 or 5 times a power of ten, at or above `value` (0 stays 0). */
function niceCeiling(value) {
  if (value <= 0) return 0;
  const power = 10 ** Math.floor(Math.log10(value));
  for (const step of [1, 2, 2.5, 5, 10]) if (step * power >= value) return step * power;
  return 10 * power;
}

// One request, found by its id (X-Request-Id) in any workspace: every recorded field, and its
// attempts across routes when the record has them.
import { admin } from "./api.js";
import { h, link, notice, replace, table } from "./dom.js";
import { formatCount, formatTime, formatUsd } from "./format.js";
import { statusOf } from "./generations-view.js";

const FIELDS = [
  ["Model", (g) => g.model],
  ["Status", (g) => [statusOf(g), g.error_code ? ` ${g.error_code}` : null]],
  ["Cost", (g) => formatUsd(g.cost_micro_usd)],
  ["Workspace", (g) => link(["workspaces", g.workspace_id, "requests"], h("code", null, g.workspace_id))],
  ["Key", (g) => link(["workspaces", g.workspace_id, "keys", g.api_key_id], h("code", null, g.api_key_id))],
  ["Format", (g) => `${g.ingress_format}${g.stream ? " (stream)" : ""}`],
  ["Source", (g) => g.source],
  ["Served by", (g) => (g.upstream_provider ? `${g.upstream_provider} · ${g.upstream_model ?? "?"}` : "—")],
  [
    "Prompt tokens",
    (g) =>
      `${formatCount(g.tokens_prompt)} (cached ${formatCount(g.tokens_cached_prompt)}, cache write ${formatCount(g.tokens_cache_write)})`,
  ],
  [
    "Completion tokens",
    (g) => `${formatCount(g.tokens_completion)} (reasoning ${formatCount(g.tokens_reasoning)})`,
  ],
  [
    "Server tools",
    (g) => {
      const tools = Object.entries(g.tool_costs_micro_usd ?? {});
      return tools.length === 0
        ? "—"
        : tools.map(([tool, micro]) => `${tool} ${formatUsd(micro)}`).join(", ");
    },
  ],
  ["Finish reason", (g) => g.finish_reason ?? "—"],
  ["Latency", (g) => (g.latency_ms === null ? "—" : `${formatCount(g.latency_ms)} ms`)],
  ["Admitted", (g) => formatTime(g.created_at)],
  ["Finished", (g) => formatTime(g.finished_at)],
];

export async function renderGeneration(container, { params }) {
  const [id] = params;
  replace(container, notice("Looking up the request…"));
  let generation;
  try {
    generation = await admin.findGeneration(id);
  } catch (error) {
    if (error.param !== "id") throw error;
    replace(container, h("h1", null, "Request"), notice(`No request with id "${id}".`, "error"));
    return;
  }
  replace(
    container,
    h(
      "div",
      { class: "page-head" },
      h("h1", null, "Request"),
      h("code", { class: "request-id" }, generation.id),
    ),
    h(
      "dl",
      { class: "card facts" },
      FIELDS.map(([label, read]) => [h("dt", null, label), h("dd", null, read(generation))]),
    ),
    Array.isArray(generation.attempts) ? renderAttempts(generation.attempts) : null,
  );
}

/** Attempts are shown field by field as recorded, whatever fields they carry. */
function renderAttempts(attempts) {
  const columns = [...new Set(attempts.flatMap((attempt) => Object.keys(attempt ?? {})))].slice(0, 12);
  const show = (value) =>
    value === null || value === undefined
      ? "—"
      : typeof value === "object"
        ? JSON.stringify(value)
        : String(value);
  return [
    h("h2", null, `Attempts (${attempts.length})`),
    table(
      ["#", ...columns],
      attempts.map((attempt, index) =>
        h(
          "tr",
          null,
          h("td", null, String(index + 1)),
          columns.map((column) => h("td", null, show(attempt?.[column]))),
        ),
      ),
    ),
  ];
}

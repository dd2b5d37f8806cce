// One request, found by its id (X-Request-Id) in any workspace: every recorded field, and its
// attempts across routes when the record has them.
import { admin } from "./api.js";
import { h, link, notice, replace, routeHref, table } from "./dom.js";
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
  [
    "Session",
    (g) =>
      g.session_id
        ? h(
            "a",
            {
              class: "session-link",
              href: `${routeHref(["workspaces", g.workspace_id, "requests"])}?${new URLSearchParams({ session_id: g.session_id })}`,
            },
            h("code", null, g.session_id),
          )
        : "—",
  ],
  ["Client", (g) => g.client ?? "—"],
  ["Usage", (g) => (g.usage_estimated ? "Estimated by the gateway" : "As the provider reported it")],
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

/**
 * Each upstream call under a heading a person reads; fields a newer gateway records beyond these
 * follow under their own name with its underscores as spaces.
 */
const ATTEMPT_COLUMNS = [
  ["provider", "Provider"],
  ["model", "Catalog model"],
  ["upstream_model", "Upstream model"],
  ["outcome", "Outcome"],
  ["latency_ms", "Latency"],
  ["dropped", "Fields dropped"],
];

function renderAttempts(attempts) {
  const known = new Set(ATTEMPT_COLUMNS.map(([name]) => name));
  const extra = [...new Set(attempts.flatMap((attempt) => Object.keys(attempt ?? {})))]
    .filter((name) => !known.has(name))
    .slice(0, 6)
    .map((name) => [name, humanize(name)]);
  const columns = [...ATTEMPT_COLUMNS, ...extra];
  const show = (name, value) => {
    if (value === null || value === undefined) return "—";
    if (name === "latency_ms") return `${formatCount(value)} ms`;
    if (name === "outcome") return outcomeBadge(String(value));
    if (Array.isArray(value)) return value.length === 0 ? "—" : value.join(", ");
    return typeof value === "object" ? JSON.stringify(value) : String(value);
  };
  return [
    h("h2", null, `Attempts (${attempts.length})`),
    table(
      ["#", ...columns.map(([, heading]) => heading)],
      attempts.map((attempt, index) =>
        h(
          "tr",
          { class: "attempt" },
          h("td", null, String(index + 1)),
          columns.map(([name]) => h("td", null, show(name, attempt?.[name]))),
        ),
      ),
    ),
  ];
}

/** `upstream_model` → "Upstream model". */
function humanize(name) {
  const words = name.replaceAll("_", " ");
  return words.charAt(0).toUpperCase() + words.slice(1);
}

/** "OK", or the error code as the error catalog names it (what an operator searches for). */
function outcomeBadge(outcome) {
  if (outcome === "ok") return h("span", { class: "badge on" }, "OK");
  const kind = outcome === "cancelled" || outcome === "circuit_open" ? "warn" : "bad";
  return h("span", { class: `badge ${kind}` }, outcome);
}

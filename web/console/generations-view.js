// A table of requests with their cost, status and (when recorded) attempts, and a request's status
// badge; the activity log (activity-view.js) shows its pages with them.
import { h, link, table } from "./dom.js";
import { formatCount, formatTime, formatUsd } from "./format.js";
import { badge } from "./workspaces-view.js";

export function statusOf(generation) {
  const kind = generation.status === "ok" ? "on" : generation.status === "in_progress" ? "warn" : "bad";
  return badge(generation.status.replace("_", " "), kind);
}

/** `keyNames`: key id → name, for the Key column. */
export function renderGenerationTable(generations, keyNames) {
  return table(
    ["Time", "Request", "Key", "Model", "Status", "Tokens in / out", "Cost", "Latency", "Attempts"],
    generations.map((generation) =>
      h(
        "tr",
        { "data-request-id": generation.id },
        h("td", { class: "nowrap" }, formatTime(generation.created_at)),
        h("td", { class: "nowrap" }, link(["requests", generation.id], h("code", null, generation.id))),
        h("td", null, keyNames.get(generation.api_key_id) ?? h("code", null, generation.api_key_id)),
        h("td", { class: "nowrap" }, generation.model),
        h(
          "td",
          null,
          statusOf(generation),
          generation.error_code ? h("small", null, ` ${generation.error_code}`) : null,
        ),
        h(
          "td",
          { class: "number" },
          `${formatCount(generation.tokens_prompt)} / ${formatCount(generation.tokens_completion)}`,
        ),
        h("td", { class: "money cost" }, formatUsd(generation.cost_micro_usd)),
        h(
          "td",
          { class: "number" },
          generation.latency_ms === null ? "—" : `${formatCount(generation.latency_ms)} ms`,
        ),
        h(
          "td",
          { class: "number" },
          Array.isArray(generation.attempts) ? String(generation.attempts.length) : "—",
        ),
      ),
    ),
    { empty: "No requests yet." },
  );
}

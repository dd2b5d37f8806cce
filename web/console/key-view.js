// One key: where it stands against each limit (settled spend, what requests in flight hold,
// headroom), its rate limit, the actions on it, and its latest requests.
import { admin } from "./api.js";
import { h, link, notice, replace, table } from "./dom.js";
import { formatTime, formatUsd } from "./format.js";
import { renderGenerationTable } from "./generations-view.js";
import { renderKeyAlerts } from "./key-alerts-view.js";
import { renderKeyEditor } from "./key-edit-view.js";
import { keyStatusActions, statusBadge } from "./keys-view.js";

const WINDOWS = [
  ["daily", "Today (UTC)"],
  ["monthly", "This month (UTC)"],
  ["total", "Total"],
];

export async function renderKeyDetails(container, { workspace, keyId }) {
  replace(container, notice("Loading key…"));
  const reload = async () => {
    const [spend, generations] = await Promise.all([
      admin.keySpend(keyId),
      admin.generations(workspace.id, { keyId, limit: 20 }),
    ]);
    if (spend.key.workspace_id !== workspace.id) throw new Error("This key belongs to another workspace");
    render(spend, generations);
  };

  const render = ({ key, limits, spend, rate_limit: rateLimit, workspace: balance }, generations) => {
    const reserved = spend.daily.reserved_micro_usd;
    replace(
      container,
      h("p", null, link(["workspaces", workspace.id, "keys"], "← All keys")),
      h(
        "div",
        { class: "card key-head" },
        h("h2", { class: "key-name" }, key.name || "(unnamed)"),
        h(
          "dl",
          { class: "facts" },
          fact("Key", h("code", null, key.display)),
          fact("Id", h("code", null, key.id)),
          fact("Status", statusBadge(key.status)),
          fact("Models", key.models ? key.models.join(", ") : "every model"),
          fact("Expires", key.expires_at ? formatTime(key.expires_at) : "never"),
          fact(
            "Rate limit",
            rateLimit.requests_per_minute === null
              ? "none"
              : `${rateLimit.requests_per_minute} requests/minute (${rateLimit.source === "key" ? "this key" : "gateway default"})`,
          ),
          fact(
            "In flight",
            h(
              "span",
              { class: "in-flight" },
              reserved === null ? "unknown" : `${formatUsd(reserved)} reserved`,
            ),
          ),
          fact(
            "Workspace",
            `balance ${formatUsd(balance.balance_micro_usd)}, ${formatUsd(balance.reserved_micro_usd)} reserved by all its requests in flight`,
          ),
        ),
        h("div", { class: "actions-row" }, keyStatusActions(key, reload), renderResetTotal(key, reload)),
      ),
      renderKeyEditor({ key, limits, onSaved: reload }),
      renderKeyAlerts({ key }),
      h("h3", null, "Spend per window"),
      table(
        ["Window", "Limit", "Spent", "Reserved", "Remaining", "Since", "Resets"],
        WINDOWS.map(([name, label]) => {
          const window = spend[name];
          return h(
            "tr",
            { "data-window": name },
            h("td", null, label),
            h(
              "td",
              { class: "money" },
              window.limit_micro_usd === null ? "no limit" : formatUsd(window.limit_micro_usd),
            ),
            h("td", { class: "money spent" }, formatUsd(window.spent_micro_usd)),
            h("td", { class: "money" }, formatUsd(window.reserved_micro_usd)),
            h(
              "td",
              { class: "money" },
              window.remaining_micro_usd === null ? "—" : formatUsd(window.remaining_micro_usd),
            ),
            h("td", null, formatTime(window.window_start)),
            h("td", null, window.resets_at ? formatTime(window.resets_at) : "by hand"),
          );
        }),
      ),
      h("h3", null, "Latest requests of this key"),
      renderGenerationTable(generations, new Map([[key.id, key.name]])),
    );
  };
  await reload();
}

function fact(label, value) {
  return [h("dt", null, label), h("dd", null, value)];
}

/** Starts a new total-spend window; the API audit-logs it under the actor given here. */
function renderResetTotal(key, reload) {
  if (key.status === "revoked") return null;
  const actor = h("input", {
    name: "actor",
    value: "console",
    size: 10,
    "aria-label": "Who resets (audit log)",
  });
  const status = h("span", { class: "inline-status" });
  return h(
    "form",
    {
      class: "reset-total",
      onsubmit: async (event) => {
        event.preventDefault();
        try {
          const answer = await admin.resetKeyTotal(key.id, actor.value.trim() || "console");
          await reload();
          document.dispatchEvent(
            new CustomEvent("console:info", {
              detail: `Total reset; the closed window had spent ${formatUsd(answer.previous_total_spend_micro_usd)}.`,
            }),
          );
        } catch (error) {
          replace(status, error.message);
        }
      },
    },
    h("button", { type: "submit", class: "secondary" }, "Reset total"),
    h("label", null, "as ", actor),
    status,
  );
}

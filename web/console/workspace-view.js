// One workspace: its balance and flags with their actions, and tabs for keys, usage, requests and budget alerts.

import { renderActivityTab } from "./activity-view.js";
import { admin } from "./api.js";
import { actionButton, h, notice, replace, reportError, routeHref } from "./dom.js";
import { formatUsd, readUsdInput } from "./format.js";
import { renderKeyDetails } from "./key-view.js";
import { renderKeysTab } from "./keys-view.js";
import { renderUsageTab } from "./usage-view.js";
import { renderAlertsTab } from "./workspace-alerts-view.js";
import { badge } from "./workspaces-view.js";

const TABS = [
  ["keys", "Keys"],
  ["usage", "Usage"],
  ["requests", "Requests"],
  ["alerts", "Alerts"],
];

export async function renderWorkspace(container, { params, tab }) {
  const [workspaceId, keyId] = params;
  const head = h("div", null, notice("Loading workspace…"));
  const body = h("div", { class: "tab-body" });
  replace(container, head, body);
  const workspace = await admin.getWorkspace(workspaceId);
  const activeTab = tab === "key" ? "keys" : tab;
  const refreshHead = async () =>
    renderHead(head, await admin.getWorkspace(workspaceId), refreshHead, activeTab);
  renderHead(head, workspace, refreshHead, activeTab);
  if (tab === "key") return renderKeyDetails(body, { workspace, keyId });
  if (tab === "usage") return renderUsageTab(body, { workspace });
  if (tab === "requests") return renderActivityTab(body, { workspace });
  if (tab === "alerts") return renderAlertsTab(body, { workspace });
  return renderKeysTab(body, { workspace });
}

function renderHead(head, workspace, refresh, activeTab) {
  const credit = h("input", { name: "credit", inputmode: "decimal", placeholder: "10.00", size: 8 });
  replace(
    head,
    h(
      "div",
      { class: "page-head" },
      h("h1", { class: "workspace-name" }, workspace.name || "(unnamed)"),
      h("code", null, workspace.id),
    ),
    h(
      "div",
      { class: "card workspace-summary" },
      h(
        "div",
        { class: "figure" },
        h("span", null, "Balance"),
        h("strong", { class: "balance" }, formatUsd(workspace.balance_micro_usd)),
      ),
      h(
        "div",
        { class: "figure" },
        h("span", null, "Invoicing"),
        workspace.invoicing ? badge("on", "on") : badge("off", "off"),
        actionButton(workspace.invoicing ? "Turn off" : "Turn on", async () => {
          await admin.updateWorkspace(workspace.id, { invoicing: !workspace.invoicing });
          await refresh();
        }),
      ),
      h(
        "div",
        { class: "figure" },
        h("span", null, "Locked"),
        workspace.locked ? badge("locked", "bad") : badge("no", "off"),
        actionButton(workspace.locked ? "Unlock" : "Lock", async () => {
          await admin.updateWorkspace(workspace.id, { locked: !workspace.locked });
          await refresh();
        }),
      ),
      h(
        "form",
        {
          class: "figure",
          onsubmit: async (event) => {
            event.preventDefault();
            const usd = readUsdInput(credit.value);
            if (usd === undefined) return;
            try {
              await admin.creditWorkspace(workspace.id, usd);
              await refresh();
            } catch (error) {
              reportError(error);
            }
          },
        },
        h("span", null, "Add credit (USD, negative removes)"),
        credit,
        h("button", { type: "submit", class: "secondary" }, "Add"),
      ),
    ),
    h(
      "nav",
      { class: "tabs" },
      TABS.map(([name, label]) => {
        const href = routeHref(["workspaces", workspace.id, name]);
        const active = name === activeTab;
        return h(
          "a",
          { href, class: active ? "active" : null, "aria-current": active ? "page" : null },
          label,
        );
      }),
    ),
  );
}

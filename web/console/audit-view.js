// The audit log: who changed what, when, on which workspace and key; newest first, one page at a
// time. Pages follow the API's cursor (`next_before`), so going deeper costs the same as the first.
import { admin } from "./api.js";
import { h, link, notice, replace, routeHref, table } from "./dom.js";
import { formatTime, formatUsd } from "./format.js";
import { keyAdmin } from "./keys-api.js";

const PAGE_SIZE = 25;

const ACTIONS = {
  "key.limits_updated": "Key changed",
  "key.total_reset": "Total spend reset",
};

const FIELDS = [
  ["daily_limit_micro_usd", "daily limit", "money"],
  ["monthly_limit_micro_usd", "monthly limit", "money"],
  ["total_limit_micro_usd", "total limit", "money"],
  ["requests_per_minute", "requests/minute", "count"],
  ["models", "models", "models"],
  ["expires_at", "expiry", "time"],
];

export async function renderAudit(container, { params }) {
  const workspaceId = params[0] || undefined;
  replace(container, notice("Loading the audit log…"));
  const workspaces = await admin.listWorkspaces();
  const names = new Map(workspaces.map((workspace) => [workspace.id, workspace.name || "(unnamed)"]));
  const filter = h(
    "select",
    {
      name: "workspace",
      "aria-label": "Workspace",
      onchange: () => {
        location.hash = filter.value ? routeHref(["audit", filter.value]) : "#/audit";
      },
    },
    h("option", { value: "" }, "All workspaces"),
    workspaces.map((workspace) =>
      h("option", { value: workspace.id, selected: workspace.id === workspaceId }, names.get(workspace.id)),
    ),
  );
  const rows = h("div", null);
  const pager = h("div", { class: "pager" });
  // Cursors of the pages before the current one, so "Newer" can go back without offsets.
  const cursors = [];
  let current;

  const load = async (before) => {
    const page = await keyAdmin.auditLog({ workspaceId, before, limit: PAGE_SIZE });
    current = before;
    replace(rows, renderEntries(page.data, names));
    replace(
      pager,
      h(
        "button",
        {
          type: "button",
          class: "secondary newer",
          disabled: cursors.length === 0,
          onclick: () => load(cursors.pop()).catch(report),
        },
        "← Newer",
      ),
      h("span", { class: "page-number" }, `Page ${cursors.length + 1}`),
      h(
        "button",
        {
          type: "button",
          class: "secondary older",
          disabled: page.next_before === null,
          onclick: () => {
            cursors.push(current);
            load(page.next_before).catch(report);
          },
        },
        "Older →",
      ),
    );
  };
  const report = (error) => replace(rows, notice(error.message, "error"));

  replace(
    container,
    h("div", { class: "page-head" }, h("h1", null, "Audit log"), h("label", { class: "inline" }, filter)),
    h(
      "p",
      { class: "hint" },
      "Changes to keys made through the admin API, the CLI or this console, with who made them (the actor they gave).",
    ),
    rows,
    pager,
  );
  await load(undefined);
}

function renderEntries(entries, names) {
  return table(
    ["When", "Who", "What", "Changes", "Workspace", "Key"],
    entries.map((entry) =>
      h(
        "tr",
        { "data-audit-id": entry.id, "data-action": entry.action },
        h("td", { class: "nowrap" }, formatTime(entry.created_at)),
        h("td", { class: "actor" }, entry.actor),
        h("td", { class: "action" }, ACTIONS[entry.action] ?? entry.action),
        h("td", { class: "changes" }, describeChanges(entry)),
        h(
          "td",
          null,
          link(["workspaces", entry.workspace_id], names.get(entry.workspace_id) ?? entry.workspace_id),
        ),
        h(
          "td",
          { class: "nowrap" },
          entry.api_key_id
            ? link(
                ["workspaces", entry.workspace_id, "keys", entry.api_key_id],
                h("code", null, entry.api_key_id),
              )
            : "—",
        ),
      ),
    ),
    { empty: "No audit entries." },
  );
}

/** "daily limit $5.00 → none; models every model → a/b" from an entry's before/after. */
function describeChanges(entry) {
  const details = entry.details ?? {};
  if (entry.action === "key.total_reset") {
    return `closed a total window that had spent ${formatUsd(details.previous_total_spend_micro_usd ?? null)}`;
  }
  if (details.before && details.after) {
    const changes = FIELDS.filter(
      ([field]) =>
        field in details.after &&
        JSON.stringify(details.before[field]) !== JSON.stringify(details.after[field]),
    ).map(
      ([field, label, kind]) =>
        `${label} ${show(details.before[field], kind)} → ${show(details.after[field], kind)}`,
    );
    return changes.length === 0 ? "no change" : changes.join("; ");
  }
  return JSON.stringify(details);
}

function show(value, kind) {
  if (kind === "money") return value === null || value === undefined ? "none" : formatUsd(value);
  if (kind === "models") return value ? value.join(", ") : "every model";
  if (kind === "time") return value ? formatTime(value) : "never";
  return value === null || value === undefined ? "default" : String(value);
}

// A workspace's keys: status and limits at a glance, the actions on each, and a form to create
// one (with spend limits, rate limit, allowlist and expiry) whose secret is shown once.
import { admin } from "./api.js";
import { actionButton, h, link, notice, replace, table } from "./dom.js";
import { formatTime, formatUsd, readUsdInput } from "./format.js";
import { renderSpendCells, SPEND_HEADINGS } from "./key-spend-cells.js";
import { keyAdmin } from "./keys-api.js";
import { badge } from "./workspaces-view.js";

export async function renderKeysTab(container, { workspace }) {
  const list = h("div", null, notice("Loading keys…"));
  const created = h("div", { class: "created-key" });
  const reload = async () => {
    // Two calls whatever the number of keys: the keys, and every key's spend in one report.
    const [keys, spend] = await Promise.all([
      admin.listKeys(workspace.id),
      keyAdmin.workspaceKeySpend(workspace.id),
    ]);
    // One-time playground keys (one per playground turn, purged after 10 minutes) would crowd
    // the list; their requests show under Requests, labelled by source.
    const oneTime = keys.filter((key) => key.source !== "api").length;
    renderKeyTable(
      list,
      keys.filter((key) => key.source === "api"),
      reload,
      new Map(spend.data.map((row) => [row.key_id, row])),
    );
    if (oneTime > 0) {
      list.append(
        h(
          "p",
          { class: "hint one-time-keys" },
          `${oneTime} one-time playground key${oneTime === 1 ? "" : "s"} not listed.`,
        ),
      );
    }
  };
  replace(container, created, list, renderCreateKeyForm(workspace, created, reload));
  await reload();
}

export function statusBadge(status) {
  return badge(status, status === "active" ? "on" : status === "disabled" ? "warn" : "bad");
}

/** Disable / enable / revoke (two clicks: revocation is final) for a key in `status`. */
export function keyStatusActions(key, after) {
  const actions = [];
  if (key.status === "active") {
    actions.push(actionButton("Disable", async () => after(await admin.setKeyStatus(key.id, "disable"))));
  }
  if (key.status === "disabled") {
    actions.push(actionButton("Enable", async () => after(await admin.setKeyStatus(key.id, "enable"))));
  }
  if (key.status !== "revoked") {
    const revoke = h("button", { type: "button", class: "danger" }, "Revoke");
    revoke.addEventListener("click", () => {
      revoke.replaceWith(
        actionButton("Confirm revoke", async () => after(await admin.setKeyStatus(key.id, "revoke")), {
          class: "danger",
        }),
      );
    });
    actions.push(revoke);
  }
  return h("span", { class: "actions" }, actions);
}

function renderKeyTable(list, keys, reload, spendByKey) {
  replace(
    list,
    table(
      ["Name", "Key", "Status", ...SPEND_HEADINGS, "Models", "Expires", "Created", ""],
      keys.map((key) =>
        h(
          "tr",
          { "data-key-id": key.id },
          h(
            "td",
            { class: "name" },
            link(["workspaces", key.workspace_id, "keys", key.id], key.name || "(unnamed)"),
          ),
          h("td", { class: "nowrap" }, h("code", null, key.display)),
          h("td", null, statusBadge(key.status)),
          renderSpendCells(spendByKey.get(key.id)),
          h("td", { class: "models" }, key.models ? key.models.join(", ") : "every model"),
          h("td", null, key.expires_at ? formatTime(key.expires_at) : "never"),
          h("td", null, formatTime(key.created_at)),
          h("td", null, keyStatusActions(key, reload)),
        ),
      ),
      { empty: "No keys yet." },
    ),
  );
}

function renderCreateKeyForm(workspace, created, reload) {
  const field = (name, props = {}) => h("input", { name, autocomplete: "off", ...props });
  const name = field("name", { maxlength: 200 });
  const models = h("textarea", {
    name: "models",
    rows: 2,
    placeholder: "openai/gpt-6-luna, anthropic/claude-sonnet-4.6 — empty: every model",
  });
  const daily = field("daily", { inputmode: "decimal", placeholder: "none" });
  const monthly = field("monthly", { inputmode: "decimal", placeholder: "none" });
  const total = field("total", { inputmode: "decimal", placeholder: "none" });
  const rpm = field("rpm", { type: "number", min: 1, step: 1, placeholder: "default" });
  const expires = field("expires", { type: "datetime-local" });
  const status = h("div", { class: "messages" });
  const submit = h("button", { type: "submit" }, "Create key");

  return h(
    "form",
    {
      class: "card key-form",
      onsubmit: async (event) => {
        event.preventDefault();
        submit.disabled = true;
        replace(status);
        try {
          const slugs = models.value.split(/[\s,]+/).filter(Boolean);
          const answer = await admin.createKey({
            workspace_id: workspace.id,
            name: name.value,
            ...(slugs.length > 0 ? { models: slugs } : {}),
            daily_limit_usd: readUsdInput(daily.value),
            monthly_limit_usd: readUsdInput(monthly.value),
            total_limit_usd: readUsdInput(total.value),
            requests_per_minute: rpm.value === "" ? undefined : Number(rpm.value),
            expires_at: expires.value === "" ? undefined : new Date(expires.value).toISOString(),
          });
          event.target.reset();
          showSecretOnce(created, answer);
          await reload();
        } catch (error) {
          replace(status, notice(error.message, "error"));
        } finally {
          submit.disabled = false;
        }
      },
    },
    h("h2", null, "New key"),
    h("div", { class: "form-grid" }, [
      h("label", null, "Name", name),
      h("label", { class: "wide" }, "Allowed models (slugs)", models),
      h("label", null, "Daily limit (USD)", daily),
      h("label", null, "Monthly limit (USD)", monthly),
      h("label", null, "Total limit (USD)", total),
      h("label", null, "Requests per minute", rpm),
      h("label", null, "Expires (local time)", expires),
    ]),
    submit,
    status,
  );
}

/** The key material, once: it is not stored anywhere and disappears with "Done". */
function showSecretOnce(container, { key, secret, limits }) {
  const secretText = h("code", { class: "secret" }, secret);
  const copy = h("button", { type: "button", class: "secondary" }, "Copy");
  copy.addEventListener("click", async () => {
    try {
      await navigator.clipboard.writeText(secret);
      copy.textContent = "Copied";
    } catch {
      getSelection().selectAllChildren(secretText);
      copy.textContent = "Selected: copy it yourself";
    }
  });
  replace(
    container,
    h(
      "div",
      { class: "card secret-card", role: "status" },
      h("h2", null, `Key "${key.name || "(unnamed)"}" created`),
      h("p", null, "Copy the key now. It is shown this once: the gateway keeps only its hash."),
      h("div", { class: "secret-row" }, secretText, copy),
      limits
        ? h(
            "p",
            { class: "hint" },
            `Limits: daily ${describeLimit(limits.daily_limit_micro_usd)}, monthly ${describeLimit(limits.monthly_limit_micro_usd)}, total ${describeLimit(limits.total_limit_micro_usd)}`,
          )
        : null,
      h("button", { type: "button", onclick: () => replace(container) }, "Done"),
    ),
  );
}

function describeLimit(microUsd) {
  return microUsd === null ? "none" : formatUsd(microUsd);
}

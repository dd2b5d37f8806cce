// The workspace list with balance, invoicing and lock state, and a form to create one.
import { AdminApiError, admin } from "./api.js";
import { actionButton, append, h, link, notice, replace, routeHref, table } from "./dom.js";
import { formatTime, formatUsd, readUsdInput } from "./format.js";

export async function renderWorkspaces(container) {
  const list = h("div", null, notice("Loading workspaces…"));
  replace(container, h("div", { class: "page-head" }, h("h1", null, "Workspaces")), list, renderCreateForm());
  const workspaces = await admin.listWorkspaces();
  replace(
    list,
    table(
      ["Name", "Id", "Balance", "Invoicing", "Locked", "Created"],
      workspaces.map((workspace) =>
        h(
          "tr",
          { "data-workspace-id": workspace.id },
          h(
            "td",
            { class: "name" },
            link(["workspaces", workspace.id, "keys"], workspace.name || "(unnamed)"),
          ),
          h("td", null, h("code", null, workspace.id)),
          h("td", { class: "money" }, formatUsd(workspace.balance_micro_usd)),
          h("td", null, workspace.invoicing ? badge("invoicing", "on") : badge("off", "off")),
          h("td", null, workspace.locked ? badge("locked", "bad") : badge("no", "off")),
          h("td", null, formatTime(workspace.created_at)),
        ),
      ),
      { empty: "No workspaces yet." },
    ),
  );
}

export function badge(text, kind) {
  return h("span", { class: `badge ${kind}` }, text);
}

function renderCreateForm() {
  const name = h("input", { name: "name", required: true, maxlength: 200, autocomplete: "off" });
  const credits = h("input", { name: "credits", inputmode: "decimal", placeholder: "0.00" });
  const invoicing = h("input", { type: "checkbox", name: "invoicing" });
  const status = h("div", { class: "messages" });

  const create = async (allowDuplicateName) => {
    const workspace = await admin.createWorkspace({
      name: name.value,
      credits_usd: readUsdInput(credits.value),
      invoicing: invoicing.checked,
      ...(allowDuplicateName ? { allow_duplicate_name: true } : {}),
    });
    location.hash = routeHref(["workspaces", workspace.id, "keys"]);
  };
  const submit = h("button", { type: "submit" }, "Create workspace");
  return h(
    "form",
    {
      class: "card inline-form",
      onsubmit: async (event) => {
        event.preventDefault();
        submit.disabled = true;
        replace(status);
        try {
          await create(false);
        } catch (error) {
          if (!(error instanceof AdminApiError)) throw error;
          replace(status, notice(error.message, "error"));
          // A name already in use is refused unless the admin says it is meant.
          if (error.param === "name" && /already|duplicate|exists/i.test(error.message)) {
            append(
              status,
              actionButton("Create it anyway", () => create(true)),
            );
          }
        } finally {
          submit.disabled = false;
        }
      },
    },
    h("h2", null, "New workspace"),
    h("label", null, "Name", name),
    h("label", null, "Initial credit (USD)", credits),
    h("label", { class: "check" }, invoicing, "Invoicing (may go below zero; billed later)"),
    submit,
    status,
  );
}

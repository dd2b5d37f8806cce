// A workspace's activity log: its requests filtered by key, model, status, error code, time and
// session, a page at a time (the admin API's cursors: any page is as quick as the first), and the
// filtered rows as a CSV download. The filter lives in the address (`#/workspaces/<id>/requests?…`)
// so a filtered view can be reloaded, bookmarked and linked to (the request page links its session).
import { activity } from "./activity-api.js";
import { admin } from "./api.js";
import { actionButton, h, notice, replace, reportError } from "./dom.js";
import { renderGenerationTable } from "./generations-view.js";

const PAGE_SIZE = 50;
const STATUSES = [
  ["", "Any status"],
  ["ok", "OK"],
  ["error", "Error"],
  ["cancelled", "Cancelled"],
  ["interrupted", "Interrupted"],
  ["in_progress", "In progress"],
];
const FILTER_NAMES = ["key_id", "model", "status", "error_code", "since", "until", "session_id"];

export async function renderActivityTab(container, { workspace }) {
  const filter = readFilterFromAddress();
  const results = h("div", { class: "activity-results" }, notice("Loading requests…"));
  const pager = h("div", { class: "pager" });
  /** Cursors of the pages before the one shown: [undefined (first page), cursor of page 2, …]. */
  let cursors = [undefined];
  let keyNames = new Map();

  const show = async () => {
    const cursor = cursors.at(-1);
    const page = await activity.page(workspace.id, filter, { cursor, limit: PAGE_SIZE });
    replace(results, renderGenerationTable(page.data, keyNames));
    renderPager(page);
  };
  const renderPager = (page) => {
    const pageNumber = cursors.length;
    const newer = h(
      "button",
      { type: "button", class: "secondary newer", disabled: pageNumber === 1 },
      "← Newer",
    );
    newer.addEventListener("click", () => {
      cursors = cursors.slice(0, -1);
      show().catch(reportError);
    });
    const older = h(
      "button",
      { type: "button", class: "secondary older", disabled: page.next_cursor === null },
      "Older →",
    );
    older.addEventListener("click", () => {
      cursors = [...cursors, page.next_cursor];
      show().catch(reportError);
    });
    const shown = page.data.length;
    replace(
      pager,
      newer,
      h(
        "span",
        { class: "page-number" },
        shown === 0 ? `Page ${pageNumber}` : `Page ${pageNumber} · ${shown} requests`,
      ),
      older,
    );
  };
  const restart = () => {
    cursors = [undefined];
    writeFilterToAddress(workspace.id, filter);
    return show();
  };

  const form = renderFilterForm(filter, async (next) => {
    Object.assign(filter, next);
    await restart();
  });
  replace(
    container,
    h(
      "div",
      { class: "page-head" },
      h("h2", null, "Requests"),
      actionButton("Refresh", restart, { class: "secondary refresh" }),
      actionButton("Export CSV", () => activity.downloadCsv(workspace.id, filter), {
        class: "secondary export-csv",
      }),
    ),
    form.element,
    results,
    pager,
  );
  const [keys, routes] = await Promise.all([
    admin.listKeys(workspace.id),
    activity.routes().catch(() => ({ models: [] })),
  ]);
  keyNames = new Map(keys.map((key) => [key.id, key.name]));
  form.setChoices(
    keys,
    routes.models.map((model) => model.slug),
  );
  await show();
}

function readFilterFromAddress() {
  const query = new URLSearchParams(location.hash.split("?")[1] ?? "");
  return Object.fromEntries(FILTER_NAMES.map((name) => [name, query.get(name) ?? ""]));
}

/** The filter into the address without a navigation (no hashchange, so the view stays). */
function writeFilterToAddress(workspaceId, filter) {
  const query = new URLSearchParams(Object.entries(filter).filter(([, value]) => value !== ""));
  const base = `#/workspaces/${encodeURIComponent(workspaceId)}/requests`;
  const text = query.toString();
  history.replaceState(null, "", text === "" ? base : `${base}?${text}`);
}

/** `2026-11-28T09:30:00Z` ↔ the value of a datetime-local input, read as UTC. */
const toInputTime = (iso) => (iso ? iso.slice(0, 16) : "");
const fromInputTime = (value) => (value ? `${value}:00Z` : "");

function renderFilterForm(filter, onApply) {
  const key = h("select", { name: "key_id" }, h("option", { value: "" }, "All keys"));
  const modelList = h("datalist", { id: "activity-models" });
  const model = h("input", {
    name: "model",
    list: "activity-models",
    value: filter.model,
    placeholder: "Any model",
    autocomplete: "off",
  });
  const status = h(
    "select",
    { name: "status" },
    STATUSES.map(([value, label]) => h("option", { value, selected: value === filter.status }, label)),
  );
  const errorCode = h("input", {
    name: "error_code",
    value: filter.error_code,
    placeholder: "e.g. provider_timeout",
    autocomplete: "off",
  });
  const since = h("input", { name: "since", type: "datetime-local", value: toInputTime(filter.since) });
  const until = h("input", { name: "until", type: "datetime-local", value: toInputTime(filter.until) });
  const session = h("input", { name: "session_id", value: filter.session_id, autocomplete: "off" });
  const read = () => ({
    key_id: key.value,
    model: model.value.trim(),
    status: status.value,
    error_code: errorCode.value.trim(),
    since: fromInputTime(since.value),
    until: fromInputTime(until.value),
    session_id: session.value.trim(),
  });
  const submit = async (next) => {
    try {
      await onApply(next);
    } catch (error) {
      reportError(error);
    }
  };
  const clear = h("button", { type: "button", class: "link-button clear" }, "Clear");
  clear.addEventListener("click", () => {
    for (const input of [model, errorCode, since, until, session]) input.value = "";
    key.value = "";
    status.value = "";
    submit(read());
  });
  const element = h(
    "form",
    {
      class: "card activity-filters",
      onsubmit: (event) => {
        event.preventDefault();
        submit(read());
      },
    },
    h("label", null, "Key", key),
    h("label", null, "Model", model, modelList),
    h("label", null, "Status", status),
    h("label", null, "Error code", errorCode),
    h("label", null, "From (UTC)", since),
    h("label", null, "Until (UTC)", until),
    h("label", null, "Session id", session),
    h("div", { class: "filter-actions" }, h("button", { type: "submit" }, "Apply"), clear),
  );
  return {
    element,
    setChoices(keys, models) {
      for (const entry of keys) {
        key.append(
          h("option", { value: entry.id, selected: entry.id === filter.key_id }, entry.name || entry.id),
        );
      }
      replace(
        modelList,
        models.map((slug) => h("option", { value: slug })),
      );
    },
  };
}

// Spend beside each limit in the key list: "spent / limit" per window, from the workspace's
// key-spend report (one call for every key).
import { h } from "./dom.js";
import { formatUsd } from "./format.js";

export const SPEND_HEADINGS = ["Today", "This month", "Total"];
const WINDOWS = ["daily", "monthly", "total"];

/** Three cells; `row` is the key's entry of GET /workspaces/{id}/key-spend (absent: unknown). */
export function renderSpendCells(row) {
  return WINDOWS.map((window) => {
    if (!row) return h("td", { class: "money spend", "data-window": window }, "—");
    const spent = row.spend[window].spent_micro_usd;
    const limit = row.limits[`${window}_limit_micro_usd`];
    const over = limit !== null && BigInt(spent) >= BigInt(limit);
    return h(
      "td",
      { class: `money spend${over ? " at-limit" : ""}`, "data-window": window },
      h("span", { class: "spent" }, formatUsd(spent)),
      limit === null ? null : h("span", { class: "limit" }, ` / ${formatUsd(limit)}`),
    );
  });
}

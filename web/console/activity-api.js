// The admin API calls of the activity log, the performance charts and the providers page (the
// rest are in api.js, whose `call` these share: same token, same-origin only, no redirects).
import { call, forgetToken, readToken, SignedOutError } from "./api.js";

const segment = (value) => encodeURIComponent(String(value));

/** `filter`: { key_id, model, status, error_code, since, until, session_id }; empty values are left out. */
export function filterQuery(filter, extra = {}) {
  const entries = Object.entries({ ...filter, ...extra }).filter(
    ([, value]) => value !== undefined && value !== null && value !== "",
  );
  return entries.length === 0 ? "" : `?${new URLSearchParams(entries.map(([k, v]) => [k, String(v)]))}`;
}

export const activity = {
  /** One page: { data, next_cursor }. */
  page: (workspaceId, filter, { cursor, limit } = {}) =>
    call("GET", `/workspaces/${segment(workspaceId)}/generations${filterQuery(filter, { cursor, limit })}`),
  performance: (workspaceId, days = 30, bucket = "day") =>
    call("GET", `/workspaces/${segment(workspaceId)}/performance${filterQuery({ days, bucket })}`),
  routes: () => call("GET", "/routes"),
  /** The filtered rows as a CSV file, saved by the browser under the server's file name. */
  async downloadCsv(workspaceId, filter) {
    const token = readToken();
    if (!token) throw new SignedOutError("Sign in first");
    const response = await fetch(
      `/internal/admin/workspaces/${segment(workspaceId)}/generations.csv${filterQuery(filter)}`,
      {
        headers: { "X-Internal-Token": token },
        mode: "same-origin",
        credentials: "omit",
        cache: "no-store",
        redirect: "error",
        referrerPolicy: "no-referrer",
      },
    );
    if (response.status === 401) {
      forgetToken();
      throw new SignedOutError("The admin token was refused");
    }
    if (!response.ok) {
      const payload = await response.json().catch(() => null);
      throw new Error(payload?.error?.message ?? `The gateway answered ${response.status}`);
    }
    const name = /filename="([^"]+)"/.exec(response.headers.get("content-disposition") ?? "")?.[1];
    const url = URL.createObjectURL(await response.blob());
    try {
      const anchor = document.createElement("a");
      anchor.href = url;
      anchor.download = name ?? "requests.csv";
      document.body.append(anchor);
      anchor.click();
      anchor.remove();
    } finally {
      setTimeout(() => URL.revokeObjectURL(url), 10_000);
    }
  },
};

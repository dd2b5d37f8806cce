// The console's only way out: the admin API of the gateway that served this page. The token lives
// in this tab's sessionStorage and is sent as X-Internal-Token to same-origin paths only; a
// redirect is refused rather than followed, so the header can never be carried elsewhere.

const TOKEN_STORAGE_KEY = "hi-gateway.console.admin-token";
const ADMIN_BASE = "/internal/admin";

export function readToken() {
  return sessionStorage.getItem(TOKEN_STORAGE_KEY);
}

export function saveToken(token) {
  sessionStorage.setItem(TOKEN_STORAGE_KEY, token);
}

export function forgetToken() {
  sessionStorage.removeItem(TOKEN_STORAGE_KEY);
}

/** An error answer of the admin API: `message`, `code`, `param` from its envelope. */
export class AdminApiError extends Error {
  constructor(status, envelope) {
    const error = envelope?.error ?? {};
    super(error.message ?? `The gateway answered ${status}`);
    this.status = status;
    this.code = error.code ?? null;
    this.param = error.param ?? null;
  }
}

/** The token was refused (or is missing): the console signs out. */
export class SignedOutError extends Error {}

const segment = (value) => encodeURIComponent(String(value));

/** One admin API call (other modules' admin calls go through it too). */
export async function call(method, path, body) {
  const token = readToken();
  if (!token) throw new SignedOutError("Sign in first");
  const headers = { "X-Internal-Token": token };
  if (body !== undefined) headers["Content-Type"] = "application/json";
  const response = await fetch(`${ADMIN_BASE}${path}`, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
    mode: "same-origin",
    credentials: "omit",
    cache: "no-store",
    redirect: "error",
    referrerPolicy: "no-referrer",
  });
  const payload = await response.json().catch(() => null);
  if (response.status === 401) {
    forgetToken();
    throw new SignedOutError(payload?.error?.message ?? "The admin token was refused");
  }
  if (!response.ok) throw new AdminApiError(response.status, payload);
  return payload;
}

export const query = (params) => {
  const entries = Object.entries(params).filter(([, value]) => value !== undefined && value !== "");
  return entries.length === 0 ? "" : `?${new URLSearchParams(entries).toString()}`;
};

export const admin = {
  listWorkspaces: async () => (await call("GET", "/workspaces")).data,
  getWorkspace: async (id) => (await call("GET", `/workspaces/${segment(id)}`)).workspace,
  createWorkspace: async (input) => (await call("POST", "/workspaces", input)).workspace,
  creditWorkspace: async (id, usd) =>
    (await call("POST", `/workspaces/${segment(id)}/credit`, { usd })).workspace,
  updateWorkspace: async (id, changes) =>
    (await call("PATCH", `/workspaces/${segment(id)}`, changes)).workspace,
  usage: (id, days = 30) => call("GET", `/workspaces/${segment(id)}/usage${query({ days })}`),
  generations: async (id, options = {}) =>
    (
      await call(
        "GET",
        `/workspaces/${segment(id)}/generations${query({ limit: options.limit, key_id: options.keyId })}`,
      )
    ).data,
  findGeneration: async (id) => (await call("GET", `/generations/${segment(id)}`)).generation,
  listKeys: async (workspaceId) => (await call("GET", `/keys${query({ workspace_id: workspaceId })}`)).data,
  createKey: (input) => call("POST", "/keys", input),
  keySpend: (id) => call("GET", `/keys/${segment(id)}/spend`),
  setKeyStatus: async (id, action) => (await call("POST", `/keys/${segment(id)}/${segment(action)}`)).key,
  resetKeyTotal: (id, actor) => call("POST", `/keys/${segment(id)}/reset-total`, { actor }),
};

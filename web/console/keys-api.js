// Admin API calls of the key editing, key spend, audit log and playground pages (through api.js's
// `call`, so they carry the token and refuse redirects like every other), and the two public API
// calls of the playground: the model catalog and a streamed chat turn with a one-time key.
import { call, query } from "./api.js";

const segment = (value) => encodeURIComponent(String(value));

export const keyAdmin = {
  /** `{workspace_id, windows, data: [{key_id, limits, spend: {daily, monthly, total}}]}` */
  workspaceKeySpend: (workspaceId) => call("GET", `/workspaces/${segment(workspaceId)}/key-spend`),
  updateKey: (id, changes) => call("PATCH", `/keys/${segment(id)}`, changes),
  getKey: (id) => call("GET", `/keys/${segment(id)}`),
  /** `{data: [entry], next_before}`; `before` pages on. */
  auditLog: (options = {}) =>
    call(
      "GET",
      `/audit-log${query({
        workspace_id: options.workspaceId,
        key_id: options.keyId,
        before: options.before,
        limit: options.limit,
      })}`,
    ),
  mintPlaygroundKey: (workspaceId, operator) =>
    call("POST", "/playground-keys", { workspace_id: workspaceId, operator }),
};

/** The public catalog (`GET /api/v1/models`): no key needed. */
export async function listCatalogModels() {
  const response = await fetch("/api/v1/models", {
    mode: "same-origin",
    credentials: "omit",
    redirect: "error",
  });
  if (!response.ok) throw new Error(`The model catalog answered ${response.status}`);
  return (await response.json()).data;
}

/**
 * One streamed chat turn with a one-time key. `onText` gets each piece of text as it arrives.
 * Resolves to `{requestId, text, usage}` (usage from the stream's last chunk, null when absent);
 * an error answer or an error event in the stream rejects with the gateway's message.
 */
export async function streamChat({ key, model, messages, onText, signal }) {
  const response = await fetch("/api/v1/chat/completions", {
    method: "POST",
    headers: { Authorization: `Bearer ${key}`, "Content-Type": "application/json" },
    body: JSON.stringify({ model, messages, stream: true, stream_options: { include_usage: true } }),
    mode: "same-origin",
    credentials: "omit",
    cache: "no-store",
    redirect: "error",
    referrerPolicy: "no-referrer",
    signal,
  });
  const requestId = response.headers.get("x-request-id");
  if (!response.ok || !response.body) {
    const payload = await response.json().catch(() => null);
    throw new Error(payload?.error?.message ?? `The gateway answered ${response.status}`);
  }
  let text = "";
  let usage = null;
  const decoder = new TextDecoder();
  const reader = response.body.getReader();
  let buffer = "";
  for (;;) {
    const { value, done } = await reader.read();
    buffer += decoder.decode(value ?? new Uint8Array(), { stream: !done });
    // Server-sent events are separated by a blank line; a partial event waits for the next read.
    let boundary = buffer.search(/\r?\n\r?\n/);
    while (boundary !== -1) {
      const event = buffer.slice(0, boundary);
      buffer = buffer.slice(boundary).replace(/^\r?\n\r?\n/, "");
      const data = event
        .split(/\r?\n/)
        .filter((line) => line.startsWith("data:"))
        .map((line) => line.slice(5).trimStart())
        .join("\n");
      if (data && data !== "[DONE]") {
        const chunk = JSON.parse(data);
        if (chunk.error) throw new Error(chunk.error.message ?? "The stream ended with an error");
        const piece = chunk.choices?.[0]?.delta?.content;
        if (piece) {
          text += piece;
          onText(piece);
        }
        if (chunk.usage) usage = chunk.usage;
      }
      boundary = buffer.search(/\r?\n\r?\n/);
    }
    if (done) break;
  }
  return { requestId, text, usage };
}

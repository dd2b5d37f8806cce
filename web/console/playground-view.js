// The playground: chat with a catalog model, streamed, billed to a chosen workspace. Every turn
// goes through a fresh one-time playground key minted for the operator by the admin API (the
// spec's playground keys: one request each, `source=playground` on the record), and shows what it
// cost: the stream's usage at once, then the exact amount from the request's record.
import { admin, SignedOutError } from "./api.js";
import { h, link, notice, replace, reportError } from "./dom.js";
import { formatUsd } from "./format.js";
import { keyAdmin, listCatalogModels, streamChat } from "./keys-api.js";

const OPERATOR_STORAGE_KEY = "hi-gateway.console.operator";
const RECORD_WAIT = { attempts: 40, delayMs: 150 };

/** The conversation survives moving to another page and back (not a reload). */
const conversation = { workspaceId: null, model: null, turns: [] };

export async function renderPlayground(container, { params }) {
  replace(container, notice("Loading the playground…"));
  const [workspaces, models] = await Promise.all([admin.listWorkspaces(), listCatalogModels()]);
  if (params[0]) conversation.workspaceId = params[0];
  conversation.workspaceId ??= workspaces[0]?.id ?? null;
  conversation.model ??= models[0]?.id ?? null;

  const workspaceSelect = h(
    "select",
    {
      name: "workspace",
      onchange: () => {
        conversation.workspaceId = workspaceSelect.value;
      },
    },
    workspaces.map((workspace) =>
      h(
        "option",
        { value: workspace.id, selected: workspace.id === conversation.workspaceId },
        `${workspace.name || "(unnamed)"} · ${formatUsd(workspace.balance_micro_usd)}`,
      ),
    ),
  );
  const modelSelect = h(
    "select",
    {
      name: "model",
      onchange: () => {
        conversation.model = modelSelect.value;
      },
    },
    models.map((model) =>
      h(
        "option",
        { value: model.id, selected: model.id === conversation.model },
        `${model.name} (${model.id})`,
      ),
    ),
  );
  const operator = h("input", {
    name: "operator",
    value: sessionStorage.getItem(OPERATOR_STORAGE_KEY) ?? "console",
    maxlength: 100,
    autocomplete: "off",
    onchange: () => sessionStorage.setItem(OPERATOR_STORAGE_KEY, operator.value.trim()),
  });
  const transcript = h("div", { class: "transcript", "aria-live": "polite" });
  const total = h("p", { class: "conversation-total" });
  const prompt = h("textarea", {
    name: "prompt",
    rows: 3,
    placeholder: "Say something to the model…",
    "aria-label": "Message",
  });
  const send = h("button", { type: "submit" }, "Send");

  const renderTranscript = () => {
    replace(
      transcript,
      conversation.turns.length === 0
        ? h("p", { class: "empty-transcript" }, "No messages yet.")
        : conversation.turns.map(renderTurn),
    );
    const known = conversation.turns.filter((turn) => turn.costMicroUsd !== null);
    const sum = known.reduce((acc, turn) => acc + BigInt(turn.costMicroUsd), 0n);
    const replies = conversation.turns.filter((turn) => turn.role === "assistant").length;
    replace(
      total,
      replies === 0 ? null : `${replies} turn${replies === 1 ? "" : "s"}, ${formatUsd(sum)} in all`,
    );
  };

  const onSubmit = async (event) => {
    event.preventDefault();
    const text = prompt.value.trim();
    if (!text || !conversation.workspaceId || !conversation.model) return;
    send.disabled = true;
    const history = conversation.turns
      .filter((turn) => !turn.failed)
      .map((turn) => ({ role: turn.role, content: turn.text }));
    const asked = { role: "user", text, costMicroUsd: null };
    const reply = {
      role: "assistant",
      text: "",
      model: conversation.model,
      costMicroUsd: null,
      pending: true,
    };
    conversation.turns.push(asked, reply);
    prompt.value = "";
    renderTranscript();
    const replyText = transcript.querySelector(".turn:last-child .turn-text");
    try {
      const minted = await keyAdmin.mintPlaygroundKey(conversation.workspaceId, operator.value.trim());
      const result = await streamChat({
        key: minted.key,
        model: conversation.model,
        messages: [...history, { role: "user", content: text }],
        onText: (piece) => {
          reply.text += piece;
          if (replyText) replyText.textContent = reply.text;
        },
      });
      reply.pending = false;
      reply.requestId = result.requestId;
      // The stream's usage carries the cost as a USD number: shown at once, then made exact.
      if (typeof result.usage?.cost === "number") {
        reply.costMicroUsd = String(Math.round(result.usage.cost * 1_000_000));
        reply.costSource = "stream";
      }
      renderTranscript();
      const recorded = await waitForRecord(result.requestId);
      if (recorded) {
        reply.costMicroUsd = recorded.cost_micro_usd;
        reply.costSource = "record";
      }
    } catch (error) {
      reply.pending = false;
      reply.failed = true;
      asked.failed = true;
      reply.error = error.message;
      if (error instanceof SignedOutError) reportError(error);
    } finally {
      send.disabled = false;
      renderTranscript();
      prompt.focus();
    }
  };

  replace(
    container,
    h("div", { class: "page-head" }, h("h1", null, "Playground")),
    h(
      "div",
      { class: "card playground-setup" },
      h("div", { class: "form-grid" }, [
        h("label", null, "Workspace (billed)", workspaceSelect),
        h("label", null, "Model", modelSelect),
        h("label", null, "Operator (the key is minted for)", operator),
      ]),
      h(
        "p",
        { class: "hint" },
        "Each turn uses a one-time playground key minted for the operator: real requests, billed to the workspace and recorded with source ",
        h("code", null, "playground"),
        ".",
      ),
      h(
        "button",
        {
          type: "button",
          class: "secondary new-conversation",
          onclick: () => {
            conversation.turns = [];
            renderTranscript();
          },
        },
        "New conversation",
      ),
    ),
    workspaces.length === 0
      ? notice("Create a workspace first: the playground's requests are billed to one.")
      : null,
    transcript,
    total,
    h("form", { class: "composer", onsubmit: onSubmit }, prompt, send),
  );
  prompt.addEventListener("keydown", (event) => {
    if (event.key === "Enter" && (event.ctrlKey || event.metaKey)) send.click();
  });
  renderTranscript();
}

function renderTurn(turn) {
  const cost =
    turn.role !== "assistant" || turn.pending || turn.failed
      ? null
      : h(
          "div",
          { class: "turn-cost", "data-cost-source": turn.costSource ?? "none" },
          turn.costMicroUsd === null ? "cost unknown" : formatUsd(turn.costMicroUsd),
          turn.requestId ? [" · ", link(["requests", turn.requestId], "request")] : null,
          turn.model ? ` · ${turn.model}` : null,
        );
  return h(
    "div",
    { class: `turn ${turn.role}${turn.failed ? " failed" : ""}`, "data-role": turn.role },
    h("div", { class: "turn-role" }, turn.role === "user" ? "You" : "Model"),
    h("div", { class: "turn-text" }, turn.pending && turn.text === "" ? "…" : turn.text),
    turn.error ? h("div", { class: "notice error" }, turn.error) : null,
    cost,
  );
}

/** The request's record, once written with its final cost (records are written in batches). */
async function waitForRecord(requestId) {
  if (!requestId) return null;
  for (let attempt = 0; attempt < RECORD_WAIT.attempts; attempt++) {
    try {
      const record = await admin.findGeneration(requestId);
      if (record.status !== "in_progress") return record;
    } catch (error) {
      if (error.param !== "id") throw error;
    }
    await new Promise((resolve) => setTimeout(resolve, RECORD_WAIT.delayMs));
  }
  return null;
}

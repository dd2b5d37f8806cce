// A workspace's budget alerts: its webhook URL and default thresholds (set, replace, remove), the
// signing secret shown once after each set, and the latest delivery attempts.
import { alertAdmin, readThresholdsInput, thresholdsText } from "./alerts-api.js";
import { actionButton, h, notice, replace, table } from "./dom.js";
import { formatTime } from "./format.js";

export async function renderAlertsTab(container, { workspace }) {
  replace(container, notice("Loading alerts…"));
  const secretSlot = h("div", { class: "secret-slot" });
  const formSlot = h("div");
  const deliveriesSlot = h("div", { class: "alert-deliveries" });

  const reloadDeliveries = async () => {
    const { data } = await alertAdmin.deliveries(workspace.id);
    replace(deliveriesSlot, renderDeliveries(data));
  };
  const reloadWebhook = async () => {
    const { webhook } = await alertAdmin.webhook(workspace.id);
    replace(formSlot, renderWebhookForm(workspace, webhook, { onSet, onRemoved }));
  };
  const onSet = async (answer) => {
    replace(secretSlot, renderSecret(answer));
    await reloadWebhook();
  };
  const onRemoved = async () => {
    replace(secretSlot);
    await reloadWebhook();
  };

  await Promise.all([reloadWebhook(), reloadDeliveries()]);
  replace(
    container,
    secretSlot,
    formSlot,
    h(
      "div",
      { class: "section-head" },
      h("h3", null, "Latest deliveries"),
      actionButton("Refresh", reloadDeliveries),
    ),
    deliveriesSlot,
  );
}

function renderWebhookForm(workspace, webhook, { onSet, onRemoved }) {
  const url = h("input", {
    name: "webhook-url",
    type: "url",
    value: webhook?.url ?? "",
    placeholder: "https://alerts.example.com/hi-gateway",
    autocomplete: "off",
  });
  const thresholds = h("input", {
    name: "webhook-thresholds",
    value: thresholdsText(webhook?.thresholds ?? null),
    placeholder: "none: only keys' own",
    autocomplete: "off",
  });
  const status = h("div", { class: "messages" });
  const save = h("button", { type: "submit" }, webhook ? "Replace webhook" : "Set webhook");
  const remove = webhook
    ? actionButton(
        "Remove webhook",
        async () => {
          replace(status);
          await alertAdmin.setWebhook(workspace.id, { url: null });
          await onRemoved();
        },
        { onError: (error) => replace(status, notice(error.message, "error")) },
      )
    : null;
  return h(
    "form",
    {
      class: "card alert-webhook",
      onsubmit: async (event) => {
        event.preventDefault();
        save.disabled = true;
        replace(status);
        try {
          const answer = await alertAdmin.setWebhook(workspace.id, {
            url: url.value.trim(),
            thresholds: readThresholdsInput(thresholds.value),
          });
          await onSet(answer);
        } catch (error) {
          replace(status, notice(error.message, "error"));
          save.disabled = false;
        }
      },
    },
    h("h2", null, "Budget alert webhook"),
    h(
      "p",
      { class: "hint" },
      webhook
        ? "Alerts of this workspace's keys are posted here, signed. Setting it again issues a new signing secret."
        : "No webhook: no budget alerts are sent for this workspace's keys.",
      " The URL must be https on a public address. The default thresholds (percent of each limit) apply to keys without their own.",
    ),
    h(
      "div",
      { class: "form-grid" },
      h("label", { class: "wide" }, "Webhook URL", url),
      h("label", null, "Default thresholds (percent, comma-separated)", thresholds),
    ),
    h("div", { class: "actions-row" }, save, remove),
    status,
  );
}

function renderSecret(answer) {
  return h(
    "div",
    { class: "card secret-card webhook-secret", role: "status" },
    h("h2", null, "Webhook set"),
    h(
      "p",
      null,
      "Copy the signing secret now. It will not be shown again: setting the webhook again issues a new one.",
    ),
    h("div", { class: "secret-row" }, h("code", { class: "secret" }, answer.secret)),
    h("p", { class: "hint" }, "Deliveries carry X-Hi-Signature, made with this secret (docs/limits.md)."),
  );
}

function renderDeliveries(rows) {
  return table(
    ["Time", "Key", "Threshold", "Window", "Attempt", "Status", "Delivered"],
    rows.map((row) =>
      h(
        "tr",
        { "data-delivery-id": row.id },
        h("td", null, formatTime(row.created_at)),
        h("td", null, h("code", null, row.api_key_id)),
        h("td", { class: "threshold" }, `${row.threshold_percent} %`),
        h("td", { class: "window" }, `${row.window} from ${formatTime(row.window_start)}`),
        h("td", null, String(row.attempt)),
        h(
          "td",
          { class: "status" },
          row.status_code === null ? row.error || "no answer" : String(row.status_code),
        ),
        h("td", { class: "delivered" }, row.delivered ? "yes" : "no"),
      ),
    ),
    { empty: "No alert has been sent yet." },
  );
}

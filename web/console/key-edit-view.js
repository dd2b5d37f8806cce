// Editing an existing key: spend limits, rate limit, model allowlist and expiry, prefilled with
// what the key has now. Only the fields changed here are sent (PATCH /internal/admin/keys/{id}); an
// emptied field clears its setting (no limit, the default rate, every model, never expires). The API
// validates and audit-logs the change under the actor given.
import { h, notice, replace } from "./dom.js";
import { readUsdInput } from "./format.js";
import { keyAdmin } from "./keys-api.js";

/** micro-USD string → "1.5" for a USD input field; null → "". */
export function microToUsdText(micro) {
  if (micro === null || micro === undefined) return "";
  const value = BigInt(micro);
  const whole = value / 1_000_000n;
  const fraction = (value % 1_000_000n).toString().padStart(6, "0").replace(/0+$/, "");
  return fraction === "" ? String(whole) : `${whole}.${fraction}`;
}

/** ISO time → the `datetime-local` value of the same moment in this browser's time zone. */
function toLocalInput(iso) {
  if (!iso) return "";
  const date = new Date(iso);
  const pad = (value) => String(value).padStart(2, "0");
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}T${pad(date.getHours())}:${pad(date.getMinutes())}`;
}

export function renderKeyEditor({ key, limits, onSaved }) {
  if (key.status === "revoked") return null;
  const field = (name, value, props = {}) => h("input", { name, value, autocomplete: "off", ...props });
  const money = (name) =>
    field(name, microToUsdText(limits[`${name}_limit_micro_usd`]), {
      inputmode: "decimal",
      placeholder: "no limit",
    });
  const inputs = {
    daily: money("daily"),
    monthly: money("monthly"),
    total: money("total"),
    rpm: field("rpm", limits.requests_per_minute ?? "", {
      type: "number",
      min: 1,
      step: 1,
      placeholder: "default",
    }),
    models: h(
      "textarea",
      { name: "models", rows: 2, placeholder: "empty: every model" },
      key.models ? key.models.join(", ") : "",
    ),
    expires: field("expires", toLocalInput(key.expires_at), { type: "datetime-local" }),
    // Budget alert thresholds have their own API call and their own card: key-alerts-view.js.
  };
  const initial = Object.fromEntries(Object.entries(inputs).map(([name, input]) => [name, input.value]));
  const actor = field("actor", sessionStorage.getItem("hi-gateway.console.operator") || "console", {
    size: 12,
    maxlength: 200,
  });
  const status = h("div", { class: "messages" });
  const save = h("button", { type: "submit" }, "Save changes");

  /** The body of the PATCH: changed fields only; an emptied one is null (cleared). */
  const readChanges = () => {
    const changed = (name) => inputs[name].value !== initial[name];
    const changes = {};
    for (const [name, wire] of [
      ["daily", "daily_limit_usd"],
      ["monthly", "monthly_limit_usd"],
      ["total", "total_limit_usd"],
    ]) {
      if (changed(name)) changes[wire] = readUsdInput(inputs[name].value) ?? null;
    }
    if (changed("rpm"))
      changes.requests_per_minute = inputs.rpm.value === "" ? null : Number(inputs.rpm.value);
    if (changed("models")) {
      const slugs = inputs.models.value.split(/[\s,]+/).filter(Boolean);
      changes.models = slugs.length === 0 ? null : slugs;
    }
    if (changed("expires")) {
      changes.expires_at = inputs.expires.value === "" ? null : new Date(inputs.expires.value).toISOString();
    }
    return changes;
  };

  return h(
    "form",
    {
      class: "card key-edit",
      onsubmit: async (event) => {
        event.preventDefault();
        const changes = readChanges();
        if (Object.keys(changes).length === 0) {
          replace(status, notice("Nothing changed."));
          return;
        }
        save.disabled = true;
        replace(status);
        try {
          await keyAdmin.updateKey(key.id, { ...changes, actor: actor.value.trim() || "console" });
          await onSaved();
          document.dispatchEvent(new CustomEvent("console:info", { detail: "Key saved." }));
        } catch (error) {
          replace(status, notice(error.message, "error"));
          save.disabled = false;
        }
      },
    },
    h("h2", null, "Edit key"),
    h(
      "p",
      { class: "hint" },
      "Empty a field to clear it: no limit, the gateway's default rate, every model, never expires. Changes reach every instance within seconds and are in the audit log.",
    ),
    h("div", { class: "form-grid" }, [
      h("label", null, "Daily limit (USD)", inputs.daily),
      h("label", null, "Monthly limit (USD)", inputs.monthly),
      h("label", null, "Total limit (USD)", inputs.total),
      h("label", null, "Requests per minute", inputs.rpm),
      h("label", null, "Expires (local time)", inputs.expires),
      h("label", { class: "wide" }, "Allowed models (slugs)", inputs.models),
      h("label", null, "Changed by (audit log)", actor),
    ]),
    save,
    status,
  );
}

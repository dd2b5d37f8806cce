// A key's budget-alert thresholds, on its page: its own list of percents, or none of its own so
// its workspace's default applies. Saved with their own call (PATCH …/keys/{id}/alert-thresholds),
// apart from the key's other settings, because the API keeps them apart.
import { alertAdmin, readThresholdsInput, thresholdsText } from "./alerts-api.js";
import { h, link, notice, replace } from "./dom.js";

export function renderKeyAlerts({ key }) {
  if (key.status === "revoked") return null;
  const card = h("form", { class: "card key-alerts" }, notice("Loading alert thresholds…"));
  const show = (thresholds) => {
    const input = h("input", {
      name: "thresholds",
      value: thresholdsText(thresholds),
      placeholder: "50, 80, 100",
      autocomplete: "off",
      size: 18,
    });
    const useWorkspace = h("input", { type: "checkbox", name: "use-workspace" });
    useWorkspace.checked = thresholds === null;
    input.disabled = useWorkspace.checked;
    useWorkspace.addEventListener("change", () => {
      input.disabled = useWorkspace.checked;
    });
    const status = h("div", { class: "messages" });
    const save = h("button", { type: "submit" }, "Save thresholds");
    card.onsubmit = async (event) => {
      event.preventDefault();
      const next = useWorkspace.checked ? null : readThresholdsInput(input.value);
      save.disabled = true;
      replace(status);
      try {
        const answer = await alertAdmin.setKeyThresholds(key.id, next);
        show(answer.thresholds);
        document.dispatchEvent(new CustomEvent("console:info", { detail: "Alert thresholds saved." }));
      } catch (error) {
        replace(status, notice(error.message, "error"));
        save.disabled = false;
      }
    };
    replace(
      card,
      h("h2", null, "Budget alerts"),
      h(
        "p",
        { class: "hint" },
        "Percent of each spend limit this key has; crossing one sends a webhook to the workspace's URL (",
        link(["workspaces", key.workspace_id, "alerts"], "Alerts"),
        "), once per window. A window without a limit never alerts.",
      ),
      h(
        "div",
        { class: "form-grid" },
        h("label", null, "Thresholds (percent, comma-separated)", input),
        h("label", { class: "check" }, useWorkspace, "Use the workspace's thresholds"),
      ),
      save,
      status,
    );
  };
  alertAdmin
    .keyThresholds(key.id)
    .then((answer) => show(answer.thresholds))
    .catch((error) => replace(card, notice(error.message, "error")));
  return card;
}

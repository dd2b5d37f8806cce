// Sign-in: the admin token is checked against the admin API before the console opens.
import { admin, forgetToken, SignedOutError, saveToken } from "./api.js";
import { h, notice, replace } from "./dom.js";

export function renderSignIn(container, { reason, onSignedIn }) {
  const token = h("input", {
    type: "password",
    name: "token",
    id: "token",
    required: true,
    autocomplete: "off",
    spellcheck: "false",
  });
  const status = h("div", { class: "messages" }, reason ? notice(reason) : null);
  const submit = h("button", { type: "submit" }, "Sign in");
  const form = h(
    "form",
    {
      class: "card sign-in",
      onsubmit: async (event) => {
        event.preventDefault();
        submit.disabled = true;
        saveToken(token.value.trim());
        try {
          await admin.listWorkspaces();
          onSignedIn();
        } catch (error) {
          forgetToken();
          const message =
            error instanceof SignedOutError
              ? "That token was refused."
              : `Could not sign in: ${error.message}`;
          replace(status, notice(message, "error"));
        } finally {
          submit.disabled = false;
        }
      },
    },
    h("h1", null, "Sign in"),
    h("label", { for: "token" }, "Admin token"),
    token,
    submit,
    status,
    h(
      "div",
      { class: "hint" },
      h("p", null, "The admin token is the gateway's ", h("code", null, "INTERNAL_SHARED_SECRET"), "."),
      h(
        "p",
        null,
        "A gateway in embedded mode started without that setting writes its token to ",
        h("code", null, "<data dir>/admin-token"),
        " on its machine: ",
        h("code", null, "cat .data/admin-token"),
        " with the default data dir (",
        h("code", null, "GATEWAY_DATA_DIR"),
        " sets another).",
      ),
      h(
        "p",
        null,
        "The token stays in this browser tab (session storage) and is sent only to this gateway, as ",
        h("code", null, "X-Internal-Token"),
        ".",
      ),
    ),
  );
  replace(container, form);
  token.focus();
}

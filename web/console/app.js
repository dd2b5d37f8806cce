// Entry point: hash routes, the navigation bar, sign-in state and the message area.
import { AdminApiError, forgetToken, readToken, SignedOutError } from "./api.js";
import { renderAudit } from "./audit-view.js";
import { h, notice, replace, routeHref } from "./dom.js";
import { renderGeneration } from "./generation-view.js";
import { renderPlayground } from "./playground-view.js";
import { renderProviders } from "./providers-view.js";
import { renderSignIn } from "./sign-in-view.js";
import { renderWorkspace } from "./workspace-view.js";
import { renderWorkspaces } from "./workspaces-view.js";

const main = document.getElementById("main");
const nav = document.getElementById("nav");

/** [pattern, view]; a view renders into the container it is given and may stay async. */
const ROUTES = [
  [/^workspaces$/, () => renderWorkspaces],
  [/^workspaces\/([^/]+)$/, () => renderWorkspace, "keys"],
  [/^workspaces\/([^/]+)\/(keys|usage|requests|alerts)$/, () => renderWorkspace],
  [/^workspaces\/([^/]+)\/keys\/([^/]+)$/, () => renderWorkspace, "key"],
  [/^requests\/([^/]+)$/, () => renderGeneration],
  [/^providers$/, () => renderProviders],
  [/^playground$/, () => renderPlayground],
  [/^playground\/([^/]+)$/, () => renderPlayground],
  [/^audit$/, () => renderAudit],
  [/^audit\/([^/]+)$/, () => renderAudit],
];

let messageArea = h("div", { class: "messages", "aria-live": "polite" });

function showMessage(error) {
  if (error instanceof SignedOutError) {
    signOut(error.message);
    return;
  }
  const text = error instanceof AdminApiError || error instanceof Error ? error.message : String(error);
  replace(messageArea, h("p", { class: "notice error", role: "alert" }, text));
}

document.addEventListener("console:error", (event) => showMessage(event.detail));
document.addEventListener("console:info", (event) => replace(messageArea, notice(String(event.detail))));

function signOut(reason) {
  forgetToken();
  sessionStorage.setItem("hi-gateway.console.signed-out-reason", reason ?? "");
  if (location.hash === "#/sign-in") route();
  else location.hash = "#/sign-in";
}

function renderNav(signedIn) {
  nav.hidden = !signedIn;
  if (!signedIn) return;
  const lookup = h("input", {
    type: "search",
    name: "request-id",
    placeholder: "Request id (X-Request-Id)",
    "aria-label": "Look up a request by id",
    autocomplete: "off",
  });
  replace(
    nav,
    h("a", { href: "#/workspaces" }, "Workspaces"),
    h("a", { href: "#/providers" }, "Providers"),
    h("a", { href: "#/playground" }, "Playground"),
    h("a", { href: "#/audit" }, "Audit log"),
    h("a", { href: "/docs" }, "API reference"),
    h(
      "form",
      {
        class: "lookup",
        onsubmit: (event) => {
          event.preventDefault();
          const id = lookup.value.trim();
          if (id) location.hash = routeHref(["requests", id]);
        },
      },
      lookup,
      h("button", { type: "submit", class: "secondary" }, "Look up"),
    ),
    h("button", { type: "button", class: "link", onclick: () => signOut("Signed out.") }, "Sign out"),
  );
}

function route() {
  const path = decodeRoute(location.hash);
  const container = h("div", { class: "view" });
  messageArea = h("div", { class: "messages", "aria-live": "polite" });
  replace(main, messageArea, container);
  if (!readToken() || path === "sign-in") {
    renderNav(false);
    const reason = sessionStorage.getItem("hi-gateway.console.signed-out-reason");
    sessionStorage.removeItem("hi-gateway.console.signed-out-reason");
    if (path !== "sign-in") history.replaceState(null, "", "#/sign-in");
    renderSignIn(container, { reason, onSignedIn: () => (location.hash = "#/workspaces") });
    return;
  }
  renderNav(true);
  for (const [pattern, view, tab] of ROUTES) {
    const match = pattern.exec(path);
    if (!match) continue;
    const params = match.slice(1).map((part) => decodeURIComponent(part));
    view()(container, { params, tab: tab ?? params[1] }).catch(showMessage);
    return;
  }
  location.hash = "#/workspaces";
}

/** The path of the hash; a view reads its own `?query` (activity-view.js keeps its filter there). */
function decodeRoute(hash) {
  return hash.replace(/^#\/?/, "").replace(/\?.*$/, "").replace(/\/+$/, "");
}

window.addEventListener("hashchange", route);
route();

// DOM building without HTML parsing: every piece of data becomes a text node or an attribute
// value, so nothing a workspace, key or request carries can turn into markup or script.

const SVG_NS = "http://www.w3.org/2000/svg";

/**
 * h("a", { class: "x", href: "#/y", onclick: fn }, "text", child, [more]) → an element.
 * Strings and numbers become text nodes; null, undefined and false are skipped. Event handlers
 * are functions only (a string is never compiled into one); other props become attributes.
 */
export function h(tag, props, ...children) {
  return build(document.createElement(tag), props, children);
}

/** The same for SVG elements. */
export function s(tag, props, ...children) {
  return build(document.createElementNS(SVG_NS, tag), props, children);
}

function build(element, props, children) {
  for (const [name, value] of Object.entries(props ?? {})) {
    if (value === null || value === undefined || value === false) continue;
    if (name.startsWith("on")) {
      if (typeof value !== "function") throw new TypeError(`${name} must be a function`);
      element.addEventListener(name.slice(2), value);
    } else if (name === "class" && !(element instanceof SVGElement)) {
      element.className = String(value);
    } else {
      element.setAttribute(name, value === true ? "" : String(value));
    }
  }
  append(element, children);
  return element;
}

export function append(element, children) {
  for (const child of [children].flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    element.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return element;
}

/** Replaces an element's children. */
export function replace(element, ...children) {
  element.replaceChildren();
  return append(element, children);
}

/** A `#/…` link whose path segments are encoded, so an id can never leave the hash. */
export function link(segments, ...children) {
  return h("a", { href: routeHref(segments) }, ...children);
}

export function routeHref(segments) {
  return `#/${segments.map((segment) => encodeURIComponent(String(segment))).join("/")}`;
}

/** A table in a container that scrolls sideways when the window is narrower than the table. */
export function table(headings, rows, options = {}) {
  const element = h(
    "table",
    { class: options.class ?? "grid" },
    h(
      "thead",
      null,
      h(
        "tr",
        null,
        headings.map((heading) => h("th", null, heading)),
      ),
    ),
    h(
      "tbody",
      null,
      rows.length === 0
        ? h(
            "tr",
            null,
            h("td", { colspan: headings.length, class: "empty" }, options.empty ?? "Nothing yet."),
          )
        : rows,
    ),
  );
  return h("div", { class: "table-scroll" }, element);
}

/** A button that runs an async action, disabled while it runs; failures go to `onError`. */
export function actionButton(label, action, options = {}) {
  const button = h("button", { type: "button", class: options.class ?? "secondary" }, label);
  button.addEventListener("click", async () => {
    button.disabled = true;
    try {
      await action();
    } catch (error) {
      (options.onError ?? reportError)(error);
    } finally {
      button.disabled = false;
    }
  });
  return button;
}

/** Shows an error in the page's message area (set up by app.js). */
export function reportError(error) {
  document.dispatchEvent(new CustomEvent("console:error", { detail: error }));
}

export function notice(text, kind = "info") {
  return h("p", { class: `notice ${kind}`, role: kind === "error" ? "alert" : "status" }, text);
}

// Providers and routes: every catalog model's routes in the order they are tried, whether each
// route's provider has its API key (the variable's name only: the key never leaves the gateway),
// and each route's circuit breaker on every running instance (as each last reported it).
import { activity } from "./activity-api.js";
import { actionButton, h, notice, replace, table } from "./dom.js";
import { formatTime } from "./format.js";
import { badge } from "./workspaces-view.js";

const BREAKER_KINDS = { closed: "on", "half-open": "warn", open: "bad" };

export async function renderProviders(container) {
  const body = h("div", null, notice("Loading routes…"));
  const reload = async () => replace(body, renderRoutes(await activity.routes()));
  replace(
    container,
    h(
      "div",
      { class: "page-head" },
      h("h1", null, "Providers and routes"),
      actionButton("Refresh", reload, { class: "secondary refresh" }),
    ),
    body,
  );
  await reload();
}

function renderRoutes(report) {
  const instances = report.instances;
  const short = (id) => (id.length > 14 ? `${id.slice(0, 14)}…` : id);
  const instanceHeading = (instance) =>
    instance.instance_id === report.instance_id
      ? `${short(instance.instance_id)} (this one)`
      : short(instance.instance_id);
  const missing = report.models.flatMap((model) => model.routes.filter((route) => !route.key_set));
  return [
    h(
      "div",
      { class: "card instances" },
      h("h2", null, instances.length === 1 ? "1 instance" : `${instances.length} instances`),
      h(
        "ul",
        { class: "instance-list" },
        instances.map((instance) =>
          h(
            "li",
            { "data-instance-id": instance.instance_id },
            h("code", { title: instance.instance_id }, instance.instance_id),
            instance.instance_id === report.instance_id ? badge("answered this page", "off") : null,
            h("span", { class: "hint" }, ` breakers as of ${formatTime(instance.reported_at)}`),
          ),
        ),
      ),
      missing.length > 0
        ? notice(
            `${missing.length} route${missing.length === 1 ? "" : "s"} cannot be used: the provider's API key variable was not set when the gateway started.`,
            "error",
          )
        : null,
    ),
    table(
      ["Model", "#", "Provider", "Upstream model", "API key", ...instances.map(instanceHeading)],
      report.models.flatMap((model) =>
        model.routes.map((route, index) =>
          h(
            "tr",
            { "data-model": model.slug, "data-route": `${route.provider}/${route.upstream_model}` },
            index === 0
              ? h("td", { rowspan: model.routes.length, class: "model" }, h("strong", null, model.slug))
              : null,
            h("td", { class: "number" }, String(index + 1)),
            h("td", null, route.provider, h("small", { class: "hint" }, ` ${route.provider_kind}`)),
            h("td", null, h("code", null, route.upstream_model)),
            h(
              "td",
              { class: "key" },
              route.key_variable === null
                ? badge("none needed", "off")
                : route.key_set
                  ? [badge("set", "on"), " ", h("code", null, route.key_variable)]
                  : [badge("missing", "bad"), " ", h("code", null, route.key_variable)],
            ),
            route.breakers.map((breaker) =>
              h(
                "td",
                { class: "breaker", "data-instance-id": breaker.instance_id },
                badge(breaker.state, BREAKER_KINDS[breaker.state] ?? "off"),
              ),
            ),
          ),
        ),
      ),
      { empty: "The catalog has no models." },
    ),
  ];
}

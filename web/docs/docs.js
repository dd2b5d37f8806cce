// Renders /openapi.json with Swagger UI (loaded just before this script by /docs). Nothing leaves
// the gateway: no validator badge, no remote config, requests of "Try it out" go to this origin.
window.SwaggerUIBundle({
  url: "/openapi.json",
  dom_id: "#swagger-ui",
  deepLinking: true,
  validatorUrl: null,
  configUrl: null,
  queryConfigEnabled: false,
  persistAuthorization: false,
  displayRequestDuration: true,
  docExpansion: "list",
  defaultModelsExpandDepth: 0,
  presets: [window.SwaggerUIBundle.presets.apis],
  layout: "BaseLayout",
});

/**
 * The groups of /docs: every operation of the route table carries exactly one of these tags
 * (create-routes.ts assigns them per group of routes), and the document lists them in this order
 * with their descriptions, which Swagger UI shows as section headings.
 */
export const OPENAPI_TAGS = [
  {
    name: "generation",
    description: "Chat Completions, Responses and Messages, streamed or not, and token counting",
  },
  { name: "catalog", description: "The models this gateway serves, with prices and features" },
  { name: "lookup", description: "Tokens, cost and status of an earlier request" },
  { name: "keys", description: "The calling key's own limits and spend; one-time playground keys" },
  { name: "admin", description: "Workspaces, keys and usage reports (X-Internal-Token)" },
  {
    name: "operations",
    description: "Health, readiness, metrics, this document and the gateway's web pages",
  },
] as const;

export type OpenApiTag = (typeof OPENAPI_TAGS)[number]["name"];

/**
 * /openapi.json: the OpenAPI 3.1 document of the route table (create-routes.ts), generated from
 * the same zod schemas that validate requests. Every served route is in it and nothing else is
 * (test/e2e/operational-endpoints.test.ts compares the document with the router).
 */
import type { ZodObject } from "zod";
import type { ResponseDescription, RouteDefinition } from "../router/route-definition.js";
import {
  createSchemaComponents,
  type JsonSchema,
  type SchemaComponents,
} from "./openapi-schema-components.js";
import { OPENAPI_TAGS } from "./openapi-tags.js";

const SECURITY_SCHEMES = {
  bearerKey: { type: "http", scheme: "bearer" },
  apiKeyHeader: { type: "apiKey", in: "header", name: "x-api-key" },
  internalToken: { type: "apiKey", in: "header", name: "X-Internal-Token" },
};

const INFO = {
  title: "AI gateway",
  version: "1",
  description:
    "Chat completions, responses and messages formats for every catalog model. A method a path " +
    "does not serve is answered 405 with an Allow header.",
};

export function createOpenApiDocument(routes: readonly RouteDefinition[]): Record<string, unknown> {
  const components = createSchemaComponents();
  const paths: Record<string, Record<string, unknown>> = {};
  for (const route of routes) {
    paths[route.path] ??= {};
    paths[route.path][route.method.toLowerCase()] = describeOperation(route, components);
  }
  return {
    openapi: "3.1.0",
    info: INFO,
    servers: [{ url: "/" }],
    tags: OPENAPI_TAGS,
    components: { schemas: components.schemas, securitySchemes: SECURITY_SCHEMES },
    paths,
  };
}

function describeOperation(route: RouteDefinition, components: SchemaComponents): Record<string, unknown> {
  const parameters = [
    ...describePathParameters(route, components),
    ...describeParameters(route.request?.query, "query", components),
  ];
  const body = route.request?.body;
  return {
    summary: route.summary,
    ...(route.description === undefined ? {} : { description: route.description }),
    ...(route.tags === undefined ? {} : { tags: route.tags }),
    ...(route.security === undefined ? {} : { security: route.security }),
    ...(parameters.length === 0 ? {} : { parameters }),
    ...(body === undefined
      ? {}
      : {
          requestBody: {
            required: true,
            content: { "application/json": { schema: components.convert(body) } },
          },
        }),
    responses: Object.fromEntries(
      Object.entries(route.responses).map(([status, response]) => [
        status,
        describeResponse(response, components),
      ]),
    ),
  };
}

/** Every `{name}` of the path, described by the route's params schema or else as a string. */
function describePathParameters(route: RouteDefinition, components: SchemaComponents): JsonSchema[] {
  const names = [...route.path.matchAll(/\{(\w+)\}/g)].map((match) => match[1]);
  const shape = route.request?.params?.shape ?? {};
  return names.map((name) => {
    const schema = shape[name] === undefined ? { type: "string" } : components.convert(shape[name]);
    return withDescription({ schema, required: true, name, in: "path" }, schema);
  });
}

function describeParameters(
  schema: ZodObject | undefined,
  location: "query",
  components: SchemaComponents,
): JsonSchema[] {
  if (schema === undefined) return [];
  return Object.entries(schema.shape).map(([name, field]) => {
    const converted = components.convert(field);
    return withDescription(
      { schema: converted, required: !field.isOptional(), name, in: location },
      converted,
    );
  });
}

/** A parameter repeats its schema's description, where documentation viewers look for it. */
function withDescription(parameter: JsonSchema, schema: JsonSchema): JsonSchema {
  if (typeof schema.description !== "string") return parameter;
  const described = { ...parameter };
  described.description = schema.description;
  return described;
}

function describeResponse(response: ResponseDescription, components: SchemaComponents): JsonSchema {
  const content: Record<string, unknown> = {};
  if (response.json !== undefined)
    content["application/json"] = { schema: components.convert(response.json) };
  if (response.eventStream) content["text/event-stream"] = { schema: { type: "string" } };
  if (response.mediaType !== undefined) content[response.mediaType] = {};
  const headers =
    response.headers === undefined
      ? undefined
      : Object.fromEntries(
          Object.entries(response.headers).map(([name, description]) => [
            name,
            { description, schema: { type: "string" } },
          ]),
        );
  return {
    description: response.description,
    ...(headers === undefined ? {} : { headers }),
    ...(Object.keys(content).length === 0 ? {} : { content }),
  };
}

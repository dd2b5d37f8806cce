/**
 * One entry of the route table (create-routes.ts): what the router serves and what /openapi.json
 * says about it, in one place. The router is built from `method`, `path` and `handler`; the
 * document from the rest, so a served route cannot go undocumented and a documented one cannot
 * go unserved.
 */
import type { ZodObject, ZodType } from "zod";
import type { RouteContext } from "./route-context.js";

export type RouteMethod = "GET" | "POST" | "PATCH";

/** An OpenAPI security requirement: scheme name → scopes (always none here). */
export type SecurityRequirement = Record<string, string[]>;

export interface ResponseDescription {
  description: string;
  /** The JSON body's schema. */
  json?: ZodType;
  /** Also answered as a `text/event-stream` (the generation endpoints with `stream: true`). */
  eventStream?: boolean;
  /** A body that is not JSON (pages, files): its media type, described without a schema. */
  mediaType?: string;
  /** Response headers it may carry: name → description (values are strings). */
  headers?: Readonly<Record<string, string>>;
}

/** Returned by a handler that wrote its answer to the Node response itself. */
export const ANSWERED: unique symbol = Symbol("answered on the Node response");

/** A web Response for the router to write, or ANSWERED. */
export type RouteAnswer = Response | typeof ANSWERED;

export type RouteHandler = (c: RouteContext) => RouteAnswer | Promise<RouteAnswer>;

export interface RouteDefinition {
  method: RouteMethod;
  /** The path as OpenAPI writes it: `{name}` is a parameter of one path segment. */
  path: string;
  /** A parameter that may span segments, as a regular expression (`{ slug: ".+" }`). */
  paramPatterns?: Readonly<Record<string, string>>;
  summary: string;
  description?: string;
  tags?: readonly string[];
  security?: readonly SecurityRequirement[];
  request?: {
    /** The JSON body (required when given). */
    body?: ZodType;
    params?: ZodObject;
    query?: ZodObject;
  };
  /** By status code or range (`"4XX"`). */
  responses: Readonly<Record<string, ResponseDescription>>;
  /**
   * Part of the bearer-key API that browsers on other origins may call: the router answers its
   * preflight and marks its answers with CORS headers (cors.ts). Never on internal-token routes.
   */
  publicApi?: boolean;
  handler: RouteHandler;
}

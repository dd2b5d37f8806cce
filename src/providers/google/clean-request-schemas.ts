/**
 * The Gemini form of every schema one request sends (tool parameters, the response schema),
 * cleaned once per request against one output budget: admission measures them (what inlining
 * `$ref`s adds is reserved, `input-rules.ts`) and the request builder sends the same objects.
 */
import type { CanonicalRequest } from "../../canonical/index.js";
import { GatewayError } from "../../errors/gateway-error.js";
import {
  cleanSchemaForGemini,
  createSchemaBudget,
  type SchemaBudget,
  SchemaTooLargeError,
} from "./clean-schema.js";

type Schema = Record<string, unknown>;

export interface CleanedSchemas {
  /** Per tool, in `request.tools` order; undefined for a tool without parameters. */
  parameters: Array<Schema | undefined>;
  responseSchema?: Schema;
}

const cleanedByRequest = new WeakMap<CanonicalRequest, CleanedSchemas>();

/** Throws `invalid_request` naming the tool or the response format whose schema is too large. */
export function cleanRequestSchemas(request: CanonicalRequest): CleanedSchemas {
  const known = cleanedByRequest.get(request);
  if (known !== undefined) return known;
  const budget = createSchemaBudget();
  const cleaned: CleanedSchemas = {
    parameters: request.tools.map((tool) =>
      tool.parameters === undefined
        ? undefined
        : clean(tool.parameters, budget, "tools", `the parameters of function "${tool.name}"`),
    ),
  };
  const format = request.responseFormat;
  if (format?.type === "json_schema") {
    const param = RESPONSE_SCHEMA_PARAMS[request.passthroughFormat ?? "chat_completions"];
    cleaned.responseSchema = clean(format.schema, budget, param, "the response schema");
  }
  cleanedByRequest.set(request, cleaned);
  return cleaned;
}

/** Where each ingress format carries the response schema. */
const RESPONSE_SCHEMA_PARAMS: Record<NonNullable<CanonicalRequest["passthroughFormat"]>, string> = {
  chat_completions: "response_format.json_schema.schema",
  responses: "text.format.schema",
  anthropic_messages: "output_config.format.schema",
};

function clean(schema: unknown, budget: SchemaBudget, param: string, subject: string): Schema {
  try {
    return cleanSchemaForGemini(schema, { budget });
  } catch (error) {
    if (error instanceof SchemaTooLargeError) {
      throw GatewayError.invalidRequest(`${param}: ${subject}: ${error.message}`, param);
    }
    throw error;
  }
}

/**
 * One activated server tool, ready for a run: what the model is offered, what a call may cost and
 * add to the next prompt at most, and how a call runs. Each tool's `prepare-*.ts` builds one from
 * the request's activation, refusing a malformed activation before anything is reserved or sent.
 */
import type { FunctionTool, ServerToolActivation } from "../../canonical/index.js";
import type { ServerToolExecution } from "../../engine/ports.js";
import { GatewayError } from "../../errors/gateway-error.js";

export interface PreparedTool {
  definition: FunctionTool;
  maxCallCostMicroUsd: number;
  maxResultTokens: number;
  readInput(argumentsJson: string): Record<string, unknown>;
  /** Never rejects: failures, the caller's abort included, are outcomes. */
  execute(argumentsJson: string, signal: AbortSignal): Promise<ServerToolExecution>;
}

/** The model's arguments as an object, for the record and the rendering; `{}` when unreadable. */
export function readArgumentsObject(argumentsJson: string): Record<string, unknown> {
  try {
    const value: unknown = JSON.parse(argumentsJson);
    return value !== null && typeof value === "object" && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : {};
  } catch {
    return {};
  }
}

/**
 * `invalid_request` naming the activation (`plugins[0]`) or one of its options (`plugins[0].timezone`),
 * in `param` and in the message: the Messages envelope has no `param`, so its text names the field.
 */
export function createActivationError(
  activation: ServerToolActivation,
  message: string,
  option?: string,
): GatewayError {
  const field = activation.param ?? "tools";
  const param = option === undefined ? field : `${field}.${option}`;
  return GatewayError.invalidRequest(`${param}: ${message}`, param);
}

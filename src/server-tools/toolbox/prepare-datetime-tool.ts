/** The datetime tool for one request: free, local, the request may choose the default zone. */
import type { ServerToolActivation } from "../../canonical/index.js";
import {
  DATETIME_TOOL_DEFINITION,
  type DatetimeConfigFile,
  resolveTimeZone,
  runDatetimeTool,
} from "../datetime/index.js";
import { createActivationError, type PreparedTool, readArgumentsObject } from "./prepared-tool.js";

/** Its JSON answer is a few hundred characters; this bounds it with room to spare. */
const MAX_RESULT_TOKENS = 1_000;

export function prepareDatetimeTool(
  activation: ServerToolActivation,
  config: DatetimeConfigFile,
  now: () => Date,
): PreparedTool {
  if (!config.enabled) {
    throw createActivationError(
      activation,
      "The datetime server tool is turned off on this gateway (server_tools.datetime.enabled)",
    );
  }
  let defaultTimeZone = config.default_timezone;
  const requested = activation.parameters?.timezone;
  if (requested !== undefined && requested !== null) {
    const zone = typeof requested === "string" ? resolveTimeZone(requested) : null;
    if (zone === null) {
      throw createActivationError(
        activation,
        `Unknown time zone ${JSON.stringify(requested)}; use an IANA name such as "Europe/Paris" or "UTC"`,
        "timezone",
      );
    }
    defaultTimeZone = zone;
  }
  return {
    definition: DATETIME_TOOL_DEFINITION,
    maxCallCostMicroUsd: 0,
    maxResultTokens: MAX_RESULT_TOKENS,
    readInput: readArgumentsObject,
    async execute(argumentsJson) {
      const result = runDatetimeTool(argumentsJson, { now, defaultTimeZone });
      if (!result.ok) {
        return {
          error: { code: "invalid_input", message: result.message },
          costMicroUsd: 0,
          forModel: result.text,
        };
      }
      return {
        output: {
          kind: "datetime",
          utc: result.utc,
          timezones: result.times.map((time) => time.timezone),
        },
        costMicroUsd: 0,
        forModel: result.text,
      };
    },
  };
}

/** Public surface of the datetime server tool. */
export { type DatetimeConfigFile, datetimeConfigSchema } from "../../config/server-tools/datetime-config.js";
export { resolveTimeZone } from "../../config/server-tools/time-zones.js";
export { DATETIME_TOOL_DEFINITION, DATETIME_TOOL_NAME } from "./datetime-tool-definition.js";
export {
  type DatetimeContext,
  type DatetimeErrorCode,
  type DatetimeToolResult,
  runDatetimeTool,
  type ZonedTimeView,
} from "./run-datetime-tool.js";

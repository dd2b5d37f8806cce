/** Public surface of the datetime server tool. */
export { type DatetimeConfigFile, datetimeConfigSchema } from "./datetime-config.js";
export { DATETIME_TOOL_DEFINITION, DATETIME_TOOL_NAME } from "./datetime-tool-definition.js";
export {
  type DatetimeContext,
  type DatetimeErrorCode,
  type DatetimeToolResult,
  runDatetimeTool,
  type ZonedTimeView,
} from "./run-datetime-tool.js";
export { resolveTimeZone } from "./time-zones.js";

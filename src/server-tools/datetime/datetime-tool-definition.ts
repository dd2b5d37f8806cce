/**
 * The datetime tool as the model sees it: a function tool whose arguments `runDatetimeTool` reads.
 * Without arguments it answers the current time (in UTC and the default zone).
 */
import type { FunctionTool } from "../../canonical/index.js";

export const DATETIME_TOOL_NAME = "datetime";

export const DATETIME_TOOL_DEFINITION: FunctionTool = {
  name: DATETIME_TOOL_NAME,
  description:
    "Get the current date and time, in UTC and in any IANA time zone, or convert a given date-time " +
    "between time zones. Daylight saving time is taken into account. Call it whenever the answer " +
    "depends on today's date or the time somewhere.",
  parameters: {
    type: "object",
    properties: {
      timezone: {
        type: "string",
        description:
          'IANA time zone to show the time in, e.g. "Europe/Paris" or "America/New_York". Default: UTC.',
      },
      time: {
        type: "string",
        description:
          'Optional ISO 8601 date-time to convert instead of now. With "Z" or an offset ("2025-03-30T02:30:00+01:00") ' +
          'it is an exact instant; without one ("2025-03-30T02:30:00") it is a local time in from_timezone.',
      },
      from_timezone: {
        type: "string",
        description: 'IANA time zone of a "time" written without an offset. Default: UTC.',
      },
    },
    additionalProperties: false,
  },
};

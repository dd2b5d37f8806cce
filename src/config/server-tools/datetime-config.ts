/**
 * Schema of the datetime server tool's configuration (`server_tools.datetime` in the YAML file).
 * The tool needs nothing to run and costs nothing; an operator may turn it off or change the zone
 * used when the model names none. Every field has a default, so the section may be left out.
 */
import { z } from "zod";
import { resolveTimeZone } from "./time-zones.js";

export const datetimeConfigSchema = z
  .strictObject({
    /** When false, activating datetime is refused as a tool that is not configured. */
    enabled: z.boolean().default(true),
    /** Zone of the answer when the model names none; stored in its canonical spelling. */
    default_timezone: z
      .string()
      .default("UTC")
      .transform((name, context) => {
        const canonical = resolveTimeZone(name);
        if (canonical === null) {
          context.addIssue({
            code: "custom",
            message: `unknown IANA time zone "${name}" (e.g. Europe/Paris, UTC)`,
          });
          return z.NEVER;
        }
        return canonical;
      }),
  })
  .prefault({});

export type DatetimeConfigFile = z.infer<typeof datetimeConfigSchema>;

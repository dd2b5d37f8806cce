/** JSON logs on stdout; secrets and prompt bodies never reach them (redaction is the last guard). */
import { type Logger, pino } from "pino";

export type { Logger };

export const REDACTED_PATHS = [
  "authorization",
  "*.authorization",
  "headers.authorization",
  'headers["x-api-key"]',
  'headers["x-internal-token"]',
  "apiKey",
  "*.apiKey",
  "secret",
  "*.secret",
  "body",
  "*.body",
];

export function createLogger(level: string, destination?: NodeJS.WritableStream): Logger {
  return pino(
    { level, base: undefined, redact: { paths: REDACTED_PATHS, censor: "[redacted]" } },
    destination as pino.DestinationStream | undefined,
  );
}

/** `npm start`: one gateway on embedded defaults, or on Postgres + Redis when configured. */
import { ConfigError } from "./config/load-config.js";
import { readSettings } from "./config/settings.js";
import { HOST_PORT_PLACEHOLDER } from "./engine/bootstrap.js";
import { startGateway } from "./gateway.js";
import { createLogger } from "./logging/logger.js";

const settings = readSettings();
const logger = createLogger(settings.logLevel);
let announcement: string | undefined;

try {
  const gateway = await startGateway({
    settings,
    logger,
    announce: (text) => {
      announcement = text;
    },
  });
  const shutdown = (signal: string) => {
    logger.info({ signal }, "shutting down");
    gateway.close().then(
      () => process.exit(0),
      (error) => {
        logger.error({ err: error }, "shutdown failed");
        process.exit(1);
      },
    );
  };
  // Registered before anything is printed: a supervisor may signal as soon as it sees the line.
  process.once("SIGTERM", () => shutdown("SIGTERM"));
  process.once("SIGINT", () => shutdown("SIGINT"));
  if (announcement) {
    process.stdout.write(`${announcement.replaceAll(HOST_PORT_PLACEHOLDER, gateway.url.slice(7))}\n`);
  }
  process.stdout.write(`Gateway listening on ${gateway.url} (OpenAPI: ${gateway.url}/openapi.json)\n`);
} catch (error) {
  if (error instanceof ConfigError) {
    process.stderr.write(`Invalid configuration: ${error.message}\n`);
  } else {
    process.stderr.write(`Gateway failed to start: ${(error as Error).stack ?? error}\n`);
  }
  process.exit(1);
}

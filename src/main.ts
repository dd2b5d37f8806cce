/** `npm start`: one gateway on embedded defaults, or on Postgres + Redis when configured. */
import os from "node:os";
import { setFlagsFromString } from "node:v8";
import { HOST_PORT_PLACEHOLDER } from "./admin/bootstrap.js";
import { ConfigError } from "./config/load-config.js";
import { readSettings } from "./config/settings.js";
import { startGateway } from "./gateway.js";
import { createLogger } from "./logging/logger.js";

const settings = readSettings();
// Under load, per-request objects that outlive two young-generation collections (records waiting
// for their batch, Redis commands awaiting replies) reach the old generation as garbage; with V8's
// own growing factor it grows to several times its live size before a full collection. The flag
// is read whenever a collection sets the next limit, so setting it here applies from the start.
if (settings.heapGrowingPercent) setFlagsFromString(`--heap-growing-percent=${settings.heapGrowingPercent}`);
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
  // The first SIGTERM or SIGINT drains and exits 0 (docs/operations.md); a second one exits at
  // once with 128 + the signal's number, as if it had killed the process (what is journaled is
  // replayed at the next start; leases of unsettled requests expire).
  let stopping = false;
  const onSignal = (signal: NodeJS.Signals) => {
    if (stopping) {
      logger.warn({ signal }, "second signal: exiting without finishing the drain");
      process.exit(128 + (os.constants.signals[signal] ?? 0));
    }
    stopping = true;
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
  process.on("SIGTERM", onSignal);
  process.on("SIGINT", onSignal);
  if (announcement) {
    process.stdout.write(`${announcement.replaceAll(HOST_PORT_PLACEHOLDER, gateway.url.slice(7))}\n`);
  }
  process.stdout.write(
    `Gateway listening on ${gateway.url} (web console: ${gateway.url}/console, ` +
      `API reference: ${gateway.url}/docs)\n`,
  );
} catch (error) {
  if (error instanceof ConfigError) {
    process.stderr.write(`Invalid configuration: ${error.message}\n`);
  } else {
    process.stderr.write(`Gateway failed to start: ${(error as Error).stack ?? error}\n`);
  }
  process.exit(1);
}

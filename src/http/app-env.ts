import type { HttpBindings } from "@hono/node-server";
import type { Logger } from "../logging/logger.js";

/** Per-request variables every route can read. */
export interface AppEnv {
  /**
   * The Node request and response under Hono's web Request (@hono/node-server): the hot
   * generation path reads and writes them directly instead of going through web streams.
   */
  Bindings: HttpBindings;
  Variables: {
    requestId: string;
    /** performance.now() at arrival. */
    startedAt: number;
    logger: Logger;
  };
}

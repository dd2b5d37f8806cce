import type { Logger } from "../logging/logger.js";

/** Per-request variables every route can read. */
export interface AppEnv {
  Variables: {
    requestId: string;
    /** performance.now() at arrival. */
    startedAt: number;
    logger: Logger;
  };
}

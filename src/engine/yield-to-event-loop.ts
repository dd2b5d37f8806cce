/**
 * Lets pending I/O run before going on: long synchronous steps of one request (parsing a body of
 * megabytes, converting thousands of messages) are split by it, so no step holds the event loop
 * for long (docs/limits.md, "Bounded work"). The process's one turn budget
 * (providers/shared/loop-turn.ts), for the engine and the routes.
 */
export {
  letIoIn as yieldToEventLoop,
  TURN_BUDGET_MS as YIELD_AFTER_MS,
} from "../providers/shared/loop-turn.js";

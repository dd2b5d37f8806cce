/**
 * V8 first runs PGlite's WebAssembly (Postgres) through its baseline compiler and recompiles the
 * functions that turn out hot with its optimising compiler, in background tasks: by default as
 * many in parallel as V8 has worker threads. Each task's compiler memory comes from its thread's
 * malloc arena, and glibc keeps an arena's high-water mark resident after that memory is freed,
 * so the peak of every thread stays in the RSS for the life of the process. One task at a time
 * holds it once (docs/pglite-tuning.md). The optimised code is the same; its compilation is only
 * serialised, which costs nothing where the process has one core and delays the last tier-ups
 * a little where it has more.
 *
 * The flag is process-wide and read when a compile task is started, so it is set before PGlite's
 * module is compiled (first `PGlite.create` of the process, in whichever thread).
 */
import { setFlagsFromString } from "node:v8";

let limited = false;

export function limitWasmCompileTasks(): void {
  if (limited) return;
  limited = true;
  setFlagsFromString("--wasm-num-compilation-tasks=1");
}

/**
 * Runs a fast-check property as a node:test check, with the run count and seed taken from the
 * environment so a CI failure can be replayed and a local run can go deeper:
 *
 *   FUZZ_RUNS=5000 npm test -- test/fuzz                  # every property 5,000 times
 *   FUZZ_ONLY='<test name>' FUZZ_SEED=-1234 FUZZ_PATH=12:3 npm test -- <file>     # replay
 *
 * The seed of every run is printed as a test diagnostic; a failure prints the seed, the shrink
 * path, the counterexample, the assertion that failed and the replay command (docs/testing.md).
 * FUZZ_ONLY (a test's full name, or a part of it; with FUZZ_PATH the full name) skips every other
 * property, so that a replay's path is not applied to properties it does not belong to.
 */
import type { TestContext } from "node:test";
import fc from "fast-check";

export interface FuzzOptions {
  /** Runs in the test suite (FUZZ_RUNS overrides it). */
  runs: number;
  /** A run that takes longer fails (a hang). */
  timeoutMs?: number;
}

function readRuns(fallback: number): number {
  const value = Number(process.env.FUZZ_RUNS);
  return Number.isInteger(value) && value > 0 ? value : fallback;
}

function readSeed(): number {
  const value = Number(process.env.FUZZ_SEED);
  return process.env.FUZZ_SEED !== undefined && Number.isInteger(value)
    ? value
    : // fast-check's seeds are 32-bit integers.
      (Math.random() * 0x1_0000_0000) | 0;
}

export async function checkProperty<Ts>(
  t: TestContext,
  property: fc.IAsyncProperty<Ts> | fc.IProperty<Ts>,
  options: FuzzOptions,
): Promise<void> {
  const only = process.env.FUZZ_ONLY;
  // A replay's path belongs to one property: with FUZZ_PATH the name must be the whole name (the
  // name of "/x" is part of the name of "/x: the valid bodies are answered").
  const chosen = process.env.FUZZ_PATH ? t.fullName === only : t.fullName.includes(only ?? "");
  if (only !== undefined && only !== "" && !chosen) {
    t.skip(`FUZZ_ONLY=${only}`);
    return;
  }
  const seed = readSeed();
  const numRuns = readRuns(options.runs);
  t.diagnostic(`fuzz: ${numRuns} runs, seed ${seed}`);
  const details = await fc.check(property as fc.IAsyncProperty<Ts>, {
    seed,
    numRuns,
    ...(process.env.FUZZ_PATH ? { path: process.env.FUZZ_PATH } : {}),
    ...(options.timeoutMs === undefined ? {} : { timeout: options.timeoutMs }),
  });
  if (!details.failed) return;
  const cause =
    details.errorInstance instanceof Error ? details.errorInstance.message : String(details.errorInstance);
  const replay = `FUZZ_ONLY='${t.fullName.replaceAll("'", "'\\''")}' FUZZ_SEED=${details.seed} FUZZ_PATH=${
    details.counterexamplePath ?? ""
  }`;
  throw new Error(
    `${fc.defaultReportMessage(details)}\nFailure: ${cause}\nReplay with: ${replay} npm test -- <this file>`,
  );
}

/**
 * Liveness (dependency-free) and readiness (database and shared state, each with a deadline).
 * Probes that arrive while a check is running share it, so a burst of /readyz calls costs one
 * database round trip, not one each. Results are not reused after the check ends: an outage
 * shows on the very next probe. Draining is read live: a stopping instance leaves the pool at once.
 */
import type { SharedState, Store } from "../../storage/store.js";
import { livenessSchema, readinessSchema } from "../openapi/openapi-schemas.js";
import { jsonResponse } from "../openapi/route-responses.js";
import type { RouteDefinition } from "../router/route-definition.js";

export const READINESS_DEADLINE_MS = 1_000;

type CheckResult = "ok" | "down";
interface Readiness {
  postgres: CheckResult;
  redis: CheckResult;
}

export function createHealthRoutes(
  store: Store,
  state: SharedState,
  isDraining: () => boolean,
): RouteDefinition[] {
  let checking: Promise<Readiness> | undefined;

  const readReadiness = (): Promise<Readiness> => {
    checking ??= (async () => {
      const [postgres, redis] = await Promise.all([
        checkWithDeadline(() => store.ping()),
        checkWithDeadline(() => state.ping()),
      ]);
      return { postgres, redis };
    })().finally(() => {
      checking = undefined;
    });
    return checking;
  };

  return [
    {
      method: "GET",
      path: "/healthz",
      summary: "Liveness",
      responses: { 200: jsonResponse(livenessSchema, "Alive") },
      handler: (c) => c.json({ status: "ok" }),
    },
    {
      method: "GET",
      path: "/readyz",
      summary: "Readiness (PostgreSQL and Redis)",
      responses: {
        200: jsonResponse(readinessSchema, "Ready"),
        503: jsonResponse(readinessSchema, "Degraded"),
      },
      handler: async (c) => {
        const { postgres, redis } = await readReadiness();
        // Read after the checks: a drain that began while they ran already counts.
        const draining = isDraining();
        const ok = postgres === "ok" && redis === "ok" && !draining;
        return c.json(
          { status: ok ? "ok" : "degraded", ...(draining ? { draining } : {}), checks: { redis, postgres } },
          ok ? 200 : 503,
        );
      },
    },
  ];
}

async function checkWithDeadline(check: () => Promise<void>): Promise<CheckResult> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<"down">((resolve) => {
    timer = setTimeout(() => resolve("down"), READINESS_DEADLINE_MS);
  });
  try {
    return await Promise.race([check().then(() => "ok" as const), deadline]);
  } catch {
    return "down";
  } finally {
    clearTimeout(timer);
  }
}

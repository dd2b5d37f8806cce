/** Liveness (dependency-free) and readiness (database and shared state, each with a deadline). */
import { Hono } from "hono";
import type { SharedState, Store } from "../../storage/types.js";
import type { AppEnv } from "../app-env.js";

export const READINESS_DEADLINE_MS = 1_000;

export function createHealthRoutes(store: Store, state: SharedState, isDraining: () => boolean) {
  const app = new Hono<AppEnv>();
  app.get("/healthz", (c) => c.json({ status: "ok" }));
  app.get("/readyz", async (c) => {
    const [postgres, redis] = await Promise.all([
      checkWithDeadline(() => store.ping()),
      checkWithDeadline(() => state.ping()),
    ]);
    const ok = postgres === "ok" && redis === "ok" && !isDraining();
    return c.json({ status: ok ? "ok" : "degraded", checks: { redis, postgres } }, ok ? 200 : 503);
  });
  return app;
}

async function checkWithDeadline(check: () => Promise<void>): Promise<"ok" | "down"> {
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

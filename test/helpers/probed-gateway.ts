/**
 * One gateway process on embedded defaults with a workspace and key, and a `/healthz` probe on its
 * own thread: what the timing tests measure event-loop stalls with. The gateway and the probe run at
 * a raised scheduling priority where permitted, so another process's work counts less.
 */
import { randomBytes } from "node:crypto";
import { writeFile } from "node:fs/promises";
import { setPriority } from "node:os";
import { join } from "node:path";
import { stringify } from "yaml";
import { createHttpAdminClient } from "../../src/cli/http-admin-client.js";
import { type GatewayProcess, startGatewayProcess } from "./gateway-process.js";
import { type HealthProbe, startHealthProbe } from "./health-prober.js";
import { createTempDir } from "./storage-modes.js";

export interface ProbedGateway {
  gateway: GatewayProcess;
  apiKey: string;
  probe: HealthProbe;
  /** Stops the probe and the gateway (SIGKILL after 2 s: one stuck in a loop ignores SIGTERM). */
  close(): Promise<void>;
}

export async function startProbedGateway(
  config: Record<string, unknown>,
  name: string,
): Promise<ProbedGateway> {
  const folder = await createTempDir(`gw-${name}-`);
  const configPath = join(folder.path, "gateway.yaml");
  await writeFile(configPath, stringify(config));
  const secret = `test-secret-${randomBytes(8).toString("hex")}`;
  const gateway = await startGatewayProcess({
    env: {
      PORT: "0",
      HOST: "127.0.0.1",
      GATEWAY_CONFIG: configPath,
      GATEWAY_DATA_DIR: join(folder.path, "data"),
      INTERNAL_SHARED_SECRET: secret,
      LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? "warn",
      FAKE_UPSTREAM_KEY: "sk-upstream",
    },
  });
  const admin = createHttpAdminClient(gateway.url, secret);
  const workspace = await admin.createWorkspace({ name, creditsUsd: "1000" });
  const apiKey = (await admin.createKey({ workspaceId: workspace.id })).secret;
  raisePriority(gateway.pid);
  const probe = startHealthProbe(gateway.url, { raisePriority: true });
  return {
    gateway,
    apiKey,
    probe,
    async close() {
      await probe.close();
      await gateway.stop(2_000);
      await folder.cleanup();
    },
  };
}

/** A higher scheduling priority, where permitted (root, CAP_SYS_NICE); a no-op elsewhere. */
function raisePriority(pid: number): void {
  try {
    setPriority(pid, -10);
  } catch {
    // Not permitted: measured at normal priority.
  }
}

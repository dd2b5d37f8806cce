/**
 * An in-process gateway with the given instance limits (connection caps, deadlines), a fake
 * OpenAI-compatible upstream and a funded key: what the hostile-client and flood tests attack.
 * Both are closed when the test ends.
 */
import type { TestContext } from "node:test";
import type { InstanceLimits } from "../../src/config/settings.js";
import type { RunningGateway } from "../../src/gateway.js";
import { startGatewayInstance } from "./disposable-servers.js";
import {
  type FakeHandler,
  type FakeOpenAiUpstream,
  startFakeOpenAiUpstream,
} from "./fake-openai-upstream.js";

export interface InstanceLimitsHarness {
  gateway: RunningGateway;
  upstream: FakeOpenAiUpstream;
  apiKey: string;
  port: number;
}

export async function startInstanceLimitsHarness(
  t: TestContext,
  name: string,
  instanceLimits: Partial<InstanceLimits>,
  handler?: FakeHandler,
): Promise<InstanceLimitsHarness> {
  const upstream = await startFakeOpenAiUpstream({ handler });
  let started: RunningGateway | undefined;
  t.after(async () => {
    await started?.close();
    await upstream.close();
  });
  const gateway = await startGatewayInstance({ upstreamBaseUrl: upstream.baseUrl, instanceLimits });
  started = gateway;
  const workspace = await gateway.store.workspaces.create({
    name,
    creditsMicroUsd: 10_000_000,
    invoicing: false,
  });
  const { secret } = await gateway.store.apiKeys.create({ workspaceId: workspace.id, name });
  return { gateway, upstream, apiKey: secret, port: gateway.port };
}

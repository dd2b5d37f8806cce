/**
 * One webhook POST under the outbound rules of web_fetch (docs/server-tools.md): https only (http
 * when allowed), the allowed ports, every address the name resolves to checked and the connection
 * pinned to it, so a name cannot point the gateway at a private or loopback address. Loopback is
 * allowed only when the operator says so (ALERT_WEBHOOK_ALLOW_LOOPBACK, for tests). No redirects
 * are followed. One deadline bounds the attempt.
 */
import { Agent } from "undici";
import { checkFetchUrl, type UrlPolicy } from "../server-tools/web-fetch/check-fetch-url.js";
import { createPinnedConnector, openSocketWithUndici } from "../server-tools/web-fetch/pinned-connector.js";
import { resolveHostAddresses } from "../server-tools/web-fetch/resolve-host.js";

export interface WebhookPolicy {
  allowHttp: boolean;
  allowLoopback: boolean;
}

export type PostResult = { statusCode: number; error: null } | { statusCode: number | null; error: string };

const ALLOWED_PORTS = [80, 443, 8080, 8443];

export function checkWebhookUrl(url: string, policy: WebhookPolicy): string | null {
  const check = checkFetchUrl(url, toUrlPolicy(policy, url));
  return check.ok ? null : check.message;
}

function toUrlPolicy(policy: WebhookPolicy, url: string): UrlPolicy {
  // A loopback receiver (tests) listens on any port.
  let port: number[] = [];
  if (policy.allowLoopback) {
    try {
      const parsed = new URL(url);
      port = parsed.port === "" ? [] : [Number(parsed.port)];
    } catch {}
  }
  return {
    allowHttp: policy.allowHttp || policy.allowLoopback,
    allowedPorts: [...ALLOWED_PORTS, ...port],
    allowLoopback: policy.allowLoopback,
  };
}

export async function postWebhook(
  url: string,
  headers: Record<string, string>,
  body: string,
  policy: WebhookPolicy,
  timeoutMs: number,
): Promise<PostResult> {
  const urlPolicy = toUrlPolicy(policy, url);
  const check = checkFetchUrl(url, urlPolicy);
  if (!check.ok) return { statusCode: null, error: check.message };
  const deadline = AbortSignal.timeout(timeoutMs);
  const agent = new Agent({
    connect: createPinnedConnector({
      policy: urlPolicy,
      resolve: resolveHostAddresses,
      openSocket: openSocketWithUndici,
      signal: deadline,
      connectTimeoutMs: timeoutMs,
    }),
  });
  try {
    const response = await agent.request({
      origin: check.url.origin,
      path: `${check.url.pathname}${check.url.search}`,
      method: "POST",
      headers: Object.assign(
        { "content-type": "application/json", "user-agent": "hi-gateway-alerts/1.0" },
        headers,
      ),
      body,
      signal: deadline,
      headersTimeout: timeoutMs,
      bodyTimeout: timeoutMs,
    });
    await response.body.dump();
    const statusCode = response.statusCode;
    return statusCode >= 200 && statusCode < 300
      ? { statusCode, error: null }
      : { statusCode, error: `HTTP ${statusCode}` };
  } catch (error) {
    return { statusCode: null, error: (error as Error).message || String(error) };
  } finally {
    agent.destroy().catch(() => {});
  }
}

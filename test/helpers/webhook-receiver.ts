/** A loopback receiver of budget-alert webhooks, for the alert tests. */
import { createServer, type IncomingMessage, type Server } from "node:http";

export interface ReceivedWebhook {
  headers: IncomingMessage["headers"];
  body: string;
}

/**
 * Listens on a free loopback port and keeps every delivery in order. `statuses[n]` answers the
 * n-th delivery (200 when absent), so a test can make the first attempts fail.
 */
export async function startWebhookReceiver(
  statuses: number[] = [],
): Promise<{ url: string; received: ReceivedWebhook[]; server: Server }> {
  const received: ReceivedWebhook[] = [];
  const server = createServer((request, response) => {
    let body = "";
    request.setEncoding("utf8");
    request.on("data", (chunk) => {
      body += chunk;
    });
    request.on("end", () => {
      received.push({ headers: request.headers, body });
      response.statusCode = statuses[received.length - 1] ?? 200;
      response.end("ok");
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  return { url: `http://127.0.0.1:${port}/hooks/budget`, received, server };
}

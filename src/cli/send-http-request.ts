/**
 * One HTTP request of the admin CLI, on node:http(s). Not `fetch`: Node's fetch loads and compiles
 * its bundled undici (and its WebAssembly parser) on first use, which costs a CLI call more CPU than
 * everything else it does.
 */
import { request as httpRequest } from "node:http";
import { request as httpsRequest } from "node:https";

export interface HttpAnswer {
  status: number;
  text: string;
}

export function sendHttpRequest(
  url: string,
  options: { method: string; headers?: Record<string, string>; body?: string; timeoutMs: number },
): Promise<HttpAnswer> {
  const target = new URL(url);
  const send = target.protocol === "https:" ? httpsRequest : httpRequest;
  return new Promise((resolve, reject) => {
    const headers: Record<string, string | number> = { ...options.headers };
    if (options.body !== undefined) headers["Content-Length"] = Buffer.byteLength(options.body);
    const request = send(
      target,
      {
        method: options.method,
        headers,
        timeout: options.timeoutMs,
      },
      (response) => {
        const chunks: Buffer[] = [];
        response.on("data", (chunk: Buffer) => chunks.push(chunk));
        response.on("end", () =>
          resolve({ status: response.statusCode ?? 0, text: Buffer.concat(chunks).toString("utf8") }),
        );
        response.on("error", reject);
      },
    );
    // `timeout` fires on an idle socket; the whole exchange is bounded by the same deadline too.
    const deadline = setTimeout(
      () => request.destroy(new Error(`no answer within ${options.timeoutMs} ms`)),
      options.timeoutMs,
    );
    request.on("timeout", () => request.destroy(new Error(`no answer within ${options.timeoutMs} ms`)));
    request.on("close", () => clearTimeout(deadline));
    request.on("error", reject);
    request.end(options.body);
  });
}

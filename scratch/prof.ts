import { fork } from "node:child_process";
import { runLoad } from "../bench/load-generator.js";
const body = '{"model":"a/b","messages":[{"role":"user","content":"hi"}]}';
const request = Buffer.from(`POST /api/v1/chat/completions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer k\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`);
const child = fork(new URL("./entry-server.ts", import.meta.url).pathname, [process.argv[2]], { execArgv: ["--import", "tsx", "--cpu-prof", "--cpu-prof-dir=/tmp/routes/prof-" + process.argv[2]] });
const port = await new Promise<number>((r) => child.once("message", (m: { port: number }) => r(m.port)));
await runLoad({ host: "127.0.0.1", port, request, mode: { kind: "concurrency", connections: 16 }, durationMs: 4000, requestTimeoutMs: 5000 });
child.kill("SIGINT");

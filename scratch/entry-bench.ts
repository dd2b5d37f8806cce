import { fork } from "node:child_process";
import { runLoad } from "../bench/load-generator.js";
const body = '{"model":"a/b","messages":[{"role":"user","content":"hi"}]}';
const request = Buffer.from(`POST /api/v1/chat/completions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer k\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`);
async function start(mode: string) {
  const child = fork(new URL("./entry-server.ts", import.meta.url).pathname, [mode], { execArgv: ["--import", "tsx"] });
  const port = await new Promise<number>((r) => child.once("message", (m: { port: number }) => r(m.port)));
  return { child, port };
}
const cpu = (child: import("node:child_process").ChildProcess) => new Promise<{ user: number; system: number }>((r) => { child.once("message", (m: { cpu: { user: number; system: number } }) => r(m.cpu)); child.send("cpu"); });
const targets = { old: await start("old"), new: await start("new") };
const ratios: number[] = [];
for (let round = 0; round < 10; round++) {
  const us: Record<string, number> = {};
  for (const mode of (round % 2 ? ["new", "old"] : ["old", "new"]) as ("old" | "new")[]) {
    const t = targets[mode];
    await runLoad({ host: "127.0.0.1", port: t.port, request, mode: { kind: "concurrency", connections: 16 }, durationMs: 300, requestTimeoutMs: 5000 });
    const before = await cpu(t.child);
    const res = await runLoad({ host: "127.0.0.1", port: t.port, request, mode: { kind: "concurrency", connections: 16 }, durationMs: 1500, requestTimeoutMs: 5000 });
    const after = await cpu(t.child);
    us[mode] = (after.user + after.system - before.user - before.system) / res.completed;
  }
  ratios.push(us.new / us.old);
  console.log(round, "old", us.old.toFixed(1), "new", us.new.toFixed(1), "ratio", (us.new / us.old).toFixed(3));
}
ratios.sort((a, b) => a - b);
console.log("median ratio new/old", ((ratios[4] + ratios[5]) / 2).toFixed(3), "range", ratios[0].toFixed(2), ratios[9].toFixed(2));
for (const t of Object.values(targets)) t.child.kill();

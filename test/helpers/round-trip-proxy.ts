/**
 * A TCP pass-through in front of PostgreSQL or Redis that tells how a request used it: every chunk
 * a client sent (when, and its bytes, so a test can pick the ones naming its request id) and,
 * when told to, answers held back `replyDelayMs` before they go back. A round trip the gateway
 * waits for then costs it that delay, so the time a request takes says how many it waited for in
 * sequence, on any machine, loaded or not; one it only started (not awaited) costs nothing.
 * A pipeline is one chunk: one round trip. Listens on 127.0.0.1 only.
 */
import { createServer, type Server, Socket } from "node:net";

export interface SentChunk {
  /** performance.now() when the proxy read it. */
  at: number;
  bytes: Buffer;
}

export interface RoundTripProxy {
  readonly port: number;
  /** `url` with its host and port replaced by the proxy's. */
  route(url: string): string;
  /** Answers go back this much later (0: at once); changes apply to answers read from then on. */
  replyDelayMs: number;
  /** Every chunk clients sent, in order. */
  readonly sent: readonly SentChunk[];
  /** The chunks sent in [from, to] (performance.now() times), optionally only those containing `text`. */
  sentBetween(from: number, to: number, text?: string): SentChunk[];
  close(): Promise<void>;
}

export async function startRoundTripProxy(targetPort: number): Promise<RoundTripProxy> {
  const sockets = new Set<Socket>();
  const sent: SentChunk[] = [];
  const proxy = {
    port: 0,
    replyDelayMs: 0,
    sent,
    route(url: string) {
      const routed = new URL(url);
      routed.hostname = "127.0.0.1";
      routed.port = String(proxy.port);
      return routed.toString();
    },
    sentBetween(from: number, to: number, text?: string) {
      return sent.filter(
        (chunk) => chunk.at >= from && chunk.at <= to && (text === undefined || chunk.bytes.includes(text)),
      );
    },
    close: async () => {},
  };
  const server: Server = createServer((client) => {
    const upstream = new Socket();
    sockets.add(client);
    sockets.add(upstream);
    const drop = () => {
      client.destroy();
      upstream.destroy();
      sockets.delete(client);
      sockets.delete(upstream);
    };
    client.on("error", drop).on("close", drop);
    upstream.on("error", drop).on("close", drop);
    // Answers keep their order: each leaves no earlier than the one before it.
    let lastReleaseAt = 0;
    upstream.connect(targetPort, "127.0.0.1", () => {
      client.on("data", (bytes: Buffer) => {
        sent.push({ at: performance.now(), bytes });
        upstream.write(bytes);
      });
      upstream.on("data", (bytes: Buffer) => {
        if (proxy.replyDelayMs <= 0 && lastReleaseAt <= performance.now()) {
          client.write(bytes);
          return;
        }
        const releaseAt = Math.max(performance.now() + proxy.replyDelayMs, lastReleaseAt);
        lastReleaseAt = releaseAt;
        setTimeout(() => client.write(bytes), releaseAt - performance.now());
      });
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", resolve);
  });
  proxy.port = (server.address() as { port: number }).port;
  proxy.close = async () => {
    for (const socket of sockets) socket.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  };
  return proxy;
}

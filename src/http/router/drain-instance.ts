/**
 * The first part of a graceful shutdown (docs/operations.md), before the instance closes its
 * dependencies (gateway.ts `close`).
 */
import type { Server } from "node:http";
import type { GenerationEngine } from "../../engine/generation-engine.js";
import { GatewayError } from "../../errors/gateway-error.js";
import type { Logger } from "../../logging/logger.js";
import type { ResponsesSockets } from "../responses-socket/responses-socket-server.js";
import { type InFlightRequests, OVERLOAD_RETRY_AFTER_SECONDS } from "./in-flight-requests.js";

/** After the drain deadline: how long ended requests get to write their error and settle. */
const SETTLE_GRACE_MS = 5_000;
/** How long a WebSocket client gets to answer the close before its connection is dropped. */
const SOCKET_CLOSE_GRACE_MS = 1_000;

/**
 * The first part of a graceful shutdown (docs/operations.md): readiness turns 503 and new requests
 * are refused with `Connection: close` at once, while the listener stays open so probes and late
 * callers get a definite answer; requests in flight run to their end for up to `drainTimeoutMs`.
 * Those still running then are ended by the instance: their upstream stopped, the client told in
 * its format (an error answer, or the stream's error event), their usage settled. Then every
 * admitted generation has handed its outcome to the store, and the connections are closed.
 */
export async function drainInstance(input: {
  server: Server;
  inFlight: InFlightRequests;
  engine: GenerationEngine;
  logger: Logger;
  drainTimeoutMs: number;
  /** The Responses WebSockets: closed (1001) as their turns end, the rest before the server closes. */
  sockets?: Pick<ResponsesSockets, "startDraining" | "closeAll">;
}): Promise<void> {
  const { server, inFlight, engine, logger, sockets } = input;
  inFlight.startDraining();
  sockets?.startDraining();
  server.closeIdleConnections();
  const startedAt = Date.now();
  logger.info({ inFlight: inFlight.size, drainTimeoutMs: input.drainTimeoutMs }, "draining");
  const endedByShutdown = new GatewayError(
    "rate_limit_exceeded",
    "This gateway instance shut down before the request finished; retry it (another instance will answer)",
    { retryAfterSeconds: OVERLOAD_RETRY_AFTER_SECONDS },
  );
  if (!(await inFlight.waitForIdle(input.drainTimeoutMs))) {
    logger.warn({ inFlight: inFlight.size }, "drain deadline passed; ending the requests still in flight");
    inFlight.abortAll(endedByShutdown);
    await inFlight.waitForIdle(SETTLE_GRACE_MS);
  }
  // An upgraded socket is no longer the HTTP server's to close, and the server's close waits for it.
  await sockets?.closeAll(endedByShutdown, SOCKET_CLOSE_GRACE_MS);
  if (!(await engine.whenSettled(SETTLE_GRACE_MS))) {
    logger.error(
      "shutdown: some admitted requests did not settle in time; their leases expire by themselves",
    );
  }
  await new Promise<void>((resolve) => {
    server.close(() => resolve());
    server.closeAllConnections();
  });
  logger.info({ tookMs: Date.now() - startedAt }, "drained");
}

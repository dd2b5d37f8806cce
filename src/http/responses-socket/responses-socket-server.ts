/**
 * The Responses WebSocket mode's handshake: the server's 'upgrade' listener (gateway.ts), which
 * Node calls for a GET with `Upgrade: websocket` only (websocket-aware-incoming-message.ts).
 *
 * In order, each refusal an HTTP answer in the common error envelope with `Connection: close`, and
 * the handshake's own log line (status 101 when accepted):
 * - a path other than `/api/v1/responses` → 404 (the mode is served there only);
 * - a `Sec-WebSocket-Key` that is not one → 400; a `Sec-WebSocket-Version` other than 13 (or 8)
 *   → 426 with `Sec-WebSocket-Version: 13`;
 * - a draining instance → 429 `rate_limit_exceeded` with `Retry-After` (another instance answers);
 * - the key of `Authorization: Bearer`, checked as on `POST /api/v1/responses` → 401
 *   `invalid_api_key` (and the same answers when the key store cannot be reached).
 * Then the WebSocket library completes the handshake (101) and the socket is a session
 * (responses-socket-session.ts). Messages over the body cap are refused by the library, which
 * closes the socket with 1009. No extension (permessage-deflate) is negotiated.
 */
import { type IncomingMessage, STATUS_CODES } from "node:http";
import type { Duplex } from "node:stream";
import { WebSocketServer } from "ws";
import { readBearerToken } from "../../auth/authenticate.js";
import { createCommonErrorEnvelope } from "../../errors/envelopes.js";
import { GatewayError, toGatewayError } from "../../errors/gateway-error.js";
import { createErrorResponseHeaders } from "../router/error-response.js";
import { createNodeHeaderReader } from "../router/node-header-reader.js";
import { createRequestId } from "../router/request-id.js";
import { CLIENT_CLOSED_STATUS, RequestLogEntry } from "../router/request-log.js";
import {
  RESPONSES_SOCKET_PATH,
  ResponsesSocketSession,
  type ResponsesSocketSessionDeps,
} from "./responses-socket-session.js";

export interface ResponsesSockets {
  /** The server's 'upgrade' listener. */
  handleUpgrade(incoming: IncomingMessage, socket: Duplex, head: Buffer): void;
  /** Sockets open now. */
  readonly size: number;
  /** New handshakes are refused; open sockets close (1001) once their turn in progress has ended. */
  startDraining(): void;
  /**
   * Closes every socket still open (1001), ending its turn with `reason`; resolves once all have
   * closed, those that did not answer the close within `graceMs` dropped.
   */
  closeAll(reason: GatewayError, graceMs: number): Promise<void>;
}

const KEY_PATTERN = /^[+/0-9A-Za-z]{22}==$/;

export function createResponsesSockets(deps: ResponsesSocketSessionDeps): ResponsesSockets {
  const server = new WebSocketServer({
    noServer: true,
    maxPayload: deps.maxMessageBytes,
    perMessageDeflate: false,
    clientTracking: false,
  });
  const sessions = new Set<ResponsesSocketSession>();
  /** Handshakes the library is completing: how each would be refused. */
  const refusals = new WeakMap<IncomingMessage, (error: GatewayError) => void>();
  // A handshake the library itself finds wrong (an unparsable header): answered like ours.
  server.on("wsClientError", (error, socket, incoming) => {
    const refuse = refusals.get(incoming);
    if (refuse === undefined) socket.destroy();
    else refuse(GatewayError.invalidRequest(`Invalid WebSocket handshake: ${error.message}`, null));
  });
  let draining = false;

  const handleUpgrade = (incoming: IncomingMessage, socket: Duplex, head: Buffer): void => {
    // Node took its own listeners off the socket: a reset while the key is checked must not throw.
    const onEarlyError = () => socket.destroy();
    socket.on("error", onEarlyError);
    const requestId = createRequestId();
    const path = pathOf(incoming.url);
    const route = path === RESPONSES_SOCKET_PATH ? RESPONSES_SOCKET_PATH : undefined;
    const requestLog = new RequestLogEntry(requestId, "GET", route, path, performance.now());
    requestLog.noteClient(incoming.headers);
    const refuse = (error: GatewayError, status = error.status, headers: Record<string, string> = {}) => {
      requestLog.noteError(error.code, error.param, error.message);
      requestLog.endAs(socket.writable ? status : CLIENT_CLOSED_STATUS, deps.report);
      writeRefusal(socket, error, requestId, status, headers);
    };
    void (async () => {
      try {
        if (route === undefined) {
          const error = GatewayError.invalidRequest(
            `WebSocket upgrades are served on ${RESPONSES_SOCKET_PATH} only, not ${path.slice(0, 200)}`,
            null,
          );
          refuse(error, 404);
          return;
        }
        const version = incoming.headers["sec-websocket-version"];
        if (version !== "13" && version !== "8") {
          const error = GatewayError.invalidRequest("Sec-WebSocket-Version must be 13", null);
          refuse(error, 426, { "Sec-WebSocket-Version": "13" });
          return;
        }
        if (!KEY_PATTERN.test(incoming.headers["sec-websocket-key"] ?? "")) {
          refuse(GatewayError.invalidRequest("Sec-WebSocket-Key is missing or not a WebSocket key", null));
          return;
        }
        if (draining) {
          refuse(createDrainingError());
          return;
        }
        const headers = createNodeHeaderReader(incoming);
        const apiKey = readBearerToken(headers.get("authorization") ?? undefined);
        requestLog.caller = await deps.authenticator.authenticate(apiKey);
        if (draining) {
          refuse(createDrainingError());
          return;
        }
        refusals.set(incoming, (error) => refuse(error));
        server.handleUpgrade(incoming, socket, head, (webSocket) => {
          refusals.delete(incoming);
          socket.off("error", onEarlyError);
          requestLog.endAs(101, deps.report);
          const session = new ResponsesSocketSession(
            webSocket,
            {
              // authenticate() accepted it, so there was one.
              apiKey: apiKey!,
              headers,
              traceparent: incoming.headers.traceparent,
              tracestate: incoming.headers.tracestate,
              sessionId: requestLog.sessionId,
              client: requestLog.client,
            },
            deps,
          );
          sessions.add(session);
          void session.closed.then(() => sessions.delete(session));
        });
      } catch (thrown) {
        const error = toGatewayError(thrown);
        if (error.code === "internal_error")
          deps.logger.error({ err: thrown, requestId }, "websocket handshake failed");
        refuse(error);
      }
    })();
  };

  return {
    handleUpgrade,
    get size() {
      return sessions.size;
    },
    startDraining() {
      draining = true;
      for (const session of sessions) session.startDraining();
    },
    async closeAll(reason, graceMs) {
      const open = [...sessions];
      for (const session of open) session.end(reason);
      let timer: NodeJS.Timeout | undefined;
      const closed = await Promise.race([
        Promise.all(open.map((session) => session.closed)).then(() => true),
        new Promise<boolean>((resolve) => {
          timer = setTimeout(() => resolve(false), graceMs);
        }),
      ]);
      clearTimeout(timer);
      if (!closed) for (const session of sessions) session.terminate();
    },
  };
}

/** An HTTP answer on the socket the handshake came on, then the socket closed. */
function writeRefusal(
  socket: Duplex,
  error: GatewayError,
  requestId: string,
  status: number,
  extraHeaders: Record<string, string>,
): void {
  if (!socket.writable) {
    socket.destroy();
    return;
  }
  const body = JSON.stringify(createCommonErrorEnvelope(error, requestId));
  const headers: Record<string, string> = {
    Connection: "close",
    "Content-Length": String(Buffer.byteLength(body)),
    ...createErrorResponseHeaders(error, requestId),
    ...extraHeaders,
  };
  let head = `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? ""}\r\n`;
  for (const [name, value] of Object.entries(headers)) head += `${name}: ${value}\r\n`;
  socket.once("finish", () => socket.destroy());
  socket.end(`${head}\r\n${body}`);
}

function createDrainingError(): GatewayError {
  return new GatewayError(
    "rate_limit_exceeded",
    "This gateway instance is shutting down and takes no new connections; retry (another instance will answer)",
    { retryAfterSeconds: 1 },
  );
}

/** The request-target's path, without its query. */
function pathOf(url: string | undefined): string {
  if (url === undefined) return "";
  const query = url.indexOf("?");
  return query === -1 ? url : url.slice(0, query);
}

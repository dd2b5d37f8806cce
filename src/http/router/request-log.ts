/**
 * One log line per request, written once when the request has ended (docs/operations.md, "Request
 * log"). The router opens an entry for every request and reports it when the response closes; a
 * generation's handler adds what it learns on the way (caller, format, model, the engine's
 * settlement), and the report then waits for that settlement, which carries the attempts, tokens
 * and cost. The same ended entry feeds the metrics and the request's spans (observability/).
 *
 * Only identifiers, counts and codes are logged: never a key (its display prefix only), a token,
 * a header or a body, so prompts and answers cannot reach the log through this line.
 */
import type { ServerResponse } from "node:http";
import type { ApiKeyWithWorkspace } from "../../auth/accounts.js";
import type { IngressFormatName } from "../../canonical/ingress-format-name.js";
import type { SettledGeneration } from "../../engine/admitted-generation.js";
import { startInfoLine } from "../../logging/logger.js";
import type { ObservedRequest, RequestTrace } from "../../observability/index.js";

/** The status logged for a client that left before its answer began (nginx's convention). */
export const CLIENT_CLOSED_STATUS = 499;
/** An unmatched path is logged as sent, up to this many characters. */
const MAX_LOGGED_PATH = 200;
/** Error bodies longer than this are not read for their code. */
const MAX_ERROR_BODY_BYTES = 8192;
/** An error's message is logged up to this many characters. */
const MAX_LOGGED_MESSAGE = 300;
/** A client's session id and name are logged up to this many characters. */
const MAX_LOGGED_CLIENT_FIELD = 128;
/**
 * Headers in which agent clients name their session: Claude Code, Codex (`session-id`, beside
 * `thread-id`), opencode and others (`x-session-id`). The first one present is logged.
 */
const SESSION_HEADERS = ["x-claude-code-session-id", "session-id", "x-session-id"] as const;

/** Receives every request once it has ended (and its generation, if any, has settled). */
export type RequestReporter = (entry: RequestLogEntry) => void;

export class RequestLogEntry implements ObservedRequest {
  /** The error code the answer carries, when it is an error. */
  errorCode: string | undefined;
  /** The field the error names (`param`; the Messages envelope has none), and its message. */
  errorParam: string | undefined;
  errorMessage: string | undefined;
  /** The client's session id (a session header) and name (its user agent's first product). */
  sessionId: string | undefined;
  client: string | undefined;
  /** performance.now() when the answer's head was written (generations). */
  firstByteAt: number | undefined;
  /** The authenticated caller (generations). */
  caller: ApiKeyWithWorkspace | undefined;
  /** The endpoint's format, and the model and stream flag as requested (generations). */
  format: IngressFormatName | undefined;
  model: string | undefined;
  stream: boolean | undefined;
  /** The engine's settlement of an admitted generation: the report waits for it. */
  settled: Promise<SettledGeneration> | undefined;
  /** The request's place in its trace (tracing on). */
  trace: RequestTrace | undefined;
  /** Set when the request has ended: the status answered, when the response closed, the settlement. */
  status = 0;
  endedAt = 0;
  settledGeneration: SettledGeneration | undefined;

  constructor(
    readonly requestId: string,
    readonly method: string,
    /** The route's pattern (`/api/v1/admin/keys/{id}`); undefined when no route matched. */
    readonly route: string | undefined,
    /** The path as sent (no query). */
    readonly path: string,
    readonly startedAt: number,
  ) {}

  /** Reads the error code, param and message off an error answer's JSON envelope (both formats'). */
  noteErrorBody(status: number, body: Buffer | undefined): void {
    if (status < 400 || this.errorCode !== undefined || body === undefined) return;
    if (body.byteLength > MAX_ERROR_BODY_BYTES) return;
    try {
      const error = (JSON.parse(body.toString("utf8")) as { error?: Record<string, unknown> }).error;
      if (typeof error?.code !== "string") return;
      this.noteError(
        error.code,
        typeof error.param === "string" ? error.param : null,
        typeof error.message === "string" ? error.message : "",
      );
    } catch {
      // Not a JSON envelope (a page's error): the status says enough.
    }
  }

  /** Notes the error an answer carries: its catalog code, the field it names, its message. */
  noteError(code: string, param: string | null | undefined, message: string): void {
    this.errorCode = code;
    this.errorParam = param ?? undefined;
    this.errorMessage = message === "" ? undefined : message.slice(0, MAX_LOGGED_MESSAGE);
  }

  /** Notes the caller's session header and user agent (agent clients send both). */
  noteClient(headers: Readonly<Record<string, string | string[] | undefined>>): void {
    for (const name of SESSION_HEADERS) {
      const value = headers[name];
      if (typeof value === "string" && value !== "") {
        this.sessionId = value.slice(0, MAX_LOGGED_CLIENT_FIELD);
        break;
      }
    }
    const agent = headers["user-agent"];
    if (typeof agent === "string" && agent !== "") {
      const space = agent.indexOf(" ");
      this.client = (space === -1 ? agent : agent.slice(0, space)).slice(0, MAX_LOGGED_CLIENT_FIELD);
    }
  }

  /** Reports the request once the response has closed (and the generation, if any, has settled). */
  end(outgoing: ServerResponse, report: RequestReporter): void {
    this.endAs(outgoing.headersSent ? outgoing.statusCode : CLIENT_CLOSED_STATUS, report);
  }

  /** The same for a request with no HTTP response of its own (a WebSocket turn): `status` as answered. */
  endAs(status: number, report: RequestReporter): void {
    this.endedAt = performance.now();
    this.status = status;
    if (this.settled === undefined) {
      report(this);
      return;
    }
    this.settled.then((settled) => {
      this.settledGeneration = settled;
      report(this);
    });
  }
}

/**
 * The request's one log line, as JSON text: written out field by field (the fields are fixed and
 * few kinds), which takes half the time of building an object and stringifying it. Strings go
 * through JSON.stringify only when they hold a character it escapes; the text is what
 * JSON.stringify would make of the same fields in the same order (request-log.test.ts).
 */
export function formatRequestLine(entry: RequestLogEntry): string {
  const settled = entry.settledGeneration;
  let line = `${startInfoLine(Date.now())}"request","requestId":${quote(entry.requestId)}`;
  line += `,"method":${quote(entry.method)},"route":${quoteOrNull(entry.route)}`;
  line += `,"status":${entry.status},"errorCode":${quoteOrNull(entry.errorCode ?? settled?.outcome.errorCode ?? undefined)}`;
  if (entry.errorParam !== undefined) line += `,"errorParam":${quote(entry.errorParam)}`;
  if (entry.errorMessage !== undefined) line += `,"errorMessage":${quote(entry.errorMessage)}`;
  line += `,"latencyMs":${integer(entry.endedAt - entry.startedAt)}`;
  if (entry.route === undefined) line += `,"path":${quote(entry.path.slice(0, MAX_LOGGED_PATH))}`;
  if (entry.caller !== undefined) {
    line += `,"keyPrefix":${quote(entry.caller.key.display)},"workspaceId":${quote(entry.caller.workspace.id)}`;
  }
  if (entry.sessionId !== undefined) line += `,"sessionId":${quote(entry.sessionId)}`;
  if (entry.client !== undefined) line += `,"client":${quote(entry.client)}`;
  if (entry.model !== undefined) {
    line += `,"model":${quote(entry.model)}`;
    if (entry.stream !== undefined) line += `,"stream":${entry.stream}`;
  }
  if (entry.firstByteAt !== undefined) line += `,"ttfbMs":${integer(entry.firstByteAt - entry.startedAt)}`;
  if (settled !== undefined) {
    const { outcome, served } = settled;
    line += `,"outcome":${quote(outcome.status)},"servedModel":${quoteOrNull(served?.model)}`;
    line += `,"provider":${quoteOrNull(served?.provider)}`;
    line += `,"servedRoute":${served === undefined ? "null" : quote(`${served.provider}/${served.upstreamModel}`)}`;
    line += `,"upstreamModel":${served === undefined ? "null" : quoteOrNull(outcome.upstreamModel ?? undefined)}`;
    const attempts = outcome.attempts ?? [];
    line += `,"attempts":${attempts.length},"tried":[`;
    for (let index = 0; index < attempts.length; index++) {
      if (index > 0) line += ",";
      line += quote(`${attempts[index].provider}:${attempts[index].outcome}`);
    }
    line += `],"tokensIn":${integer(outcome.tokensPrompt)},"tokensOut":${integer(outcome.tokensCompletion)}`;
    line += `,"costMicroUsd":${integer(outcome.costMicroUsd)}`;
  }
  return `${line}}`;
}

function quote(text: string): string {
  return needsEscaping(text) ? JSON.stringify(text) : `"${text}"`;
}

/**
 * Holds a character JSON.stringify writes escaped: a quote, a backslash, a control character, or
 * a surrogate half (a lone one is escaped; a pair takes the slow path too, which is still exact).
 */
function needsEscaping(text: string): boolean {
  for (let index = 0; index < text.length; index++) {
    const code = text.charCodeAt(index);
    if (code < 0x20 || code === 0x22 || code === 0x5c || (code >= 0xd800 && code <= 0xdfff)) return true;
  }
  return false;
}

function quoteOrNull(text: string | undefined): string {
  return text === undefined ? "null" : quote(text);
}

/** A whole number of milliseconds, tokens or micro-dollars (JSON has no NaN: null, as JSON.stringify). */
function integer(value: number): string {
  const rounded = Math.round(value);
  return Number.isFinite(rounded) ? String(rounded) : "null";
}

/**
 * One log line per request, written once when the request has ended (docs/operations.md, "Request
 * log"). The router opens an entry for every request and writes it when the response closes; a
 * generation's handler adds what it learns on the way (caller, model, the engine's settlement),
 * and the line then waits for that settlement, which carries the attempts, tokens and cost.
 *
 * Only identifiers, counts and codes are logged: never a key (its display prefix only), a token,
 * a header or a body, so prompts and answers cannot reach the log through this line.
 */
import type { ServerResponse } from "node:http";
import type { ApiKeyWithWorkspace } from "../auth/accounts.js";
import type { SettledGeneration } from "../engine/admitted-generation.js";
import type { Logger } from "../logging/logger.js";

/** The status logged for a client that left before its answer began (nginx's convention). */
export const CLIENT_CLOSED_STATUS = 499;
/** An unmatched path is logged as sent, up to this many characters. */
const MAX_LOGGED_PATH = 200;
/** Error bodies longer than this are not read for their code. */
const MAX_ERROR_BODY_BYTES = 8192;

export class RequestLogEntry {
  /** The error code the answer carries, when it is an error. */
  errorCode: string | undefined;
  /** performance.now() when the answer's head was written (generations). */
  firstByteAt: number | undefined;
  /** The authenticated caller (generations). */
  caller: ApiKeyWithWorkspace | undefined;
  /** The model and stream flag as requested (generations). */
  model: string | undefined;
  stream: boolean | undefined;
  /** The engine's settlement of an admitted generation: the line waits for it. */
  settled: Promise<SettledGeneration> | undefined;

  constructor(
    readonly requestId: string,
    readonly method: string,
    /** The route's pattern (`/api/v1/admin/keys/{id}`); undefined when no route matched. */
    readonly route: string | undefined,
    private readonly path: string,
    readonly startedAt: number,
  ) {}

  /** Reads the error code off an error answer's JSON envelope (both envelopes carry `error.code`). */
  noteErrorBody(status: number, body: Buffer | undefined): void {
    if (status < 400 || this.errorCode !== undefined || body === undefined) return;
    if (body.byteLength > MAX_ERROR_BODY_BYTES) return;
    try {
      const code = (JSON.parse(body.toString("utf8")) as { error?: { code?: unknown } }).error?.code;
      if (typeof code === "string") this.errorCode = code;
    } catch {
      // Not a JSON envelope (a page's error): the status says enough.
    }
  }

  /** Writes the line once the response has closed (and the generation, if any, has settled). */
  end(outgoing: ServerResponse, logger: Logger): void {
    const endedAt = performance.now();
    const status = outgoing.headersSent ? outgoing.statusCode : CLIENT_CLOSED_STATUS;
    if (this.settled === undefined) {
      this.write(logger, status, endedAt, undefined);
      return;
    }
    this.settled.then((settled) => this.write(logger, status, endedAt, settled));
  }

  private write(
    logger: Logger,
    status: number,
    endedAt: number,
    settled: SettledGeneration | undefined,
  ): void {
    const line: Record<string, unknown> = {
      requestId: this.requestId,
      method: this.method,
      route: this.route ?? null,
      status,
      errorCode: this.errorCode ?? settled?.outcome.errorCode ?? null,
      latencyMs: Math.round(endedAt - this.startedAt),
    };
    if (this.route === undefined) line.path = this.path.slice(0, MAX_LOGGED_PATH);
    if (this.caller !== undefined) {
      line.keyPrefix = this.caller.key.display;
      line.workspaceId = this.caller.workspace.id;
    }
    if (this.model !== undefined) {
      line.model = this.model;
      line.stream = this.stream;
    }
    if (this.firstByteAt !== undefined) line.ttfbMs = Math.round(this.firstByteAt - this.startedAt);
    if (settled !== undefined) {
      const { outcome, served } = settled;
      line.outcome = outcome.status;
      line.servedModel = served?.model ?? null;
      line.provider = served?.provider ?? null;
      line.servedRoute = served === undefined ? null : `${served.provider}/${served.upstreamModel}`;
      line.upstreamModel = served === undefined ? null : outcome.upstreamModel;
      const attempts = outcome.attempts ?? [];
      line.attempts = attempts.length;
      line.tried = attempts.map((attempt) => `${attempt.provider}:${attempt.outcome}`);
      line.tokensIn = outcome.tokensPrompt;
      line.tokensOut = outcome.tokensCompletion;
      line.costMicroUsd = outcome.costMicroUsd;
    }
    logger.info(line, "request");
  }
}

/**
 * What metrics and traces read about a request once it has ended: the router's record of it
 * (http/request-log.ts fills it in as the request goes, the same record its log line is written
 * from) and, for an admitted generation, the engine's settlement. Read after the response closed
 * and the generation settled, never on the request's path.
 */
import type { IngressFormatName } from "../canonical/ingress-format-name.js";
import type { SettledGeneration } from "../engine/admitted-generation.js";
import type { RequestTrace } from "./request-trace.js";

export interface ObservedRequest {
  readonly requestId: string;
  readonly method: string;
  /** The route's pattern from the route table (`/api/v1/models/{slug}`); undefined: no route matched. */
  readonly route: string | undefined;
  /** The status answered; 499 when the client left before the answer began. */
  readonly status: number;
  /** The error code the answer carried (absent: none, or the settlement's). */
  readonly errorCode: string | undefined;
  /** performance.now() times: arrival, the answer's head written (generations), the response closed. */
  readonly startedAt: number;
  readonly firstByteAt: number | undefined;
  readonly endedAt: number;
  /** Generations: the endpoint's format, and the model and stream flag as requested. */
  readonly format: IngressFormatName | undefined;
  /** As the caller wrote it: any text, so it is checked against the catalog before it is a label. */
  readonly model: string | undefined;
  readonly stream: boolean | undefined;
  /** The engine's settlement of an admitted generation. */
  readonly settledGeneration: SettledGeneration | undefined;
  /** The request's place in its trace, when it is traced. */
  readonly trace: RequestTrace | undefined;
}

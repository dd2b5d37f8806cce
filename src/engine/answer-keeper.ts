/**
 * A cached request's miss (docs/response-cache.md): its complete answer goes into the response
 * cache once the run settled. Streamed, the parts shown to the client are kept as they pass, until
 * the answer outgrows what one entry may hold; non-streamed, the run's whole result is stored.
 * Cut answers (length, content filter) and failures are never stored; a hit is already there.
 */
import type { CanonicalResult, CanonicalStreamPart, FinishReason } from "../canonical/index.js";
import { foldStreamParts } from "../providers/shared/fold-stream-parts.js";
import type { AdmittedGeneration } from "./admitted-generation.js";
import type { GenerationOutcome } from "./generation-record.js";
import type { AnswerCache } from "./ports.js";

export class AnswerKeeper {
  /** Streamed: the parts shown so far, to store once complete (undefined once too large). */
  private kept?: { parts: CanonicalStreamPart[]; bytes: number };

  private constructor(
    private readonly admitted: AdmittedGeneration,
    private readonly cache: AnswerCache,
  ) {
    if (admitted.request.stream) this.kept = { parts: [], bytes: 0 };
  }

  /** A keeper for a cached request's miss; undefined for a hit or a request that is not cached. */
  static for(admitted: AdmittedGeneration, cache: AnswerCache | undefined): AnswerKeeper | undefined {
    if (cache === undefined || admitted.cache === undefined || admitted.cache.hit) return undefined;
    return new AnswerKeeper(admitted, cache);
  }

  /** Keeps a streamed part shown to the client, until the answer outgrows one entry. */
  keep(part: CanonicalStreamPart): void {
    const kept = this.kept;
    if (kept === undefined) return;
    // The parts' text dominates an entry; the fixed part per entry covers the JSON around it.
    kept.bytes +=
      64 + ("delta" in part ? part.delta.length : 0) + ("arguments" in part ? part.arguments.length : 0);
    if (kept.bytes > this.admitted.cache!.maxBytes) this.kept = undefined;
    else kept.parts.push(part);
  }

  /** Stores the answer when it completed (`result`: the non-streamed run's); never rejects. */
  async store(
    status: GenerationOutcome["status"],
    finishReason: FinishReason | undefined,
    result: CanonicalResult | undefined,
  ): Promise<void> {
    const cache = this.admitted.cache;
    if (cache === undefined || cache.hit || status !== "ok") return;
    if (finishReason !== "stop" && finishReason !== "stop-sequence" && finishReason !== "tool-calls") return;
    const answer = this.admitted.request.stream
      ? this.kept === undefined
        ? undefined
        : foldStreamParts(this.kept.parts)
      : result;
    this.kept = undefined;
    if (answer !== undefined) await this.cache.write(cache.ticket, answer);
  }
}

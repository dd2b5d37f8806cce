/**
 * One upstream round of the tool loop (tool-loop.ts) as it arrives: what the client sees of each
 * part (`transform`: the model's calls to the gateway's tools hidden, becoming `server-tool-call`
 * parts; the round's usage and finish held back), and what the round collected for the loop: the
 * model's turn (`content`), the calls of the gateway's tools (`calls`), the caller's own calls
 * (held until the server calls have their results, so no format shows a result after them), and
 * the upstream's finish.
 */
import type {
  AssistantContentPart,
  CanonicalRequest,
  CanonicalStreamPart,
  OpaqueReasoningState,
  ServerToolActivation,
  ServerToolCall,
  ServerToolId,
  ServerToolSource,
} from "../canonical/index.js";
import { TextPieces } from "../canonical/index.js";
import { HeldParts } from "../providers/shared/held-parts.js";
import { findCitations } from "./find-citations.js";
import type { NativeToolParts } from "./native-tool-parts.js";
import type { ServerToolSession } from "./ports.js";
import type { CallRefusal } from "./tool-use-bounds.js";

/** A call of one of the gateway's tools, as the round received it. */
export interface PendingCall {
  call: ServerToolCall;
  /** The model's own id for the call (the next round's tool result answers it). */
  upstreamId: string;
  argumentsJson: string;
  /** Set when the call is answered without running (a limit). */
  refusal?: CallRefusal;
}

export class RoundReceiver {
  /** The round being received (1-based). */
  round = 1;
  /** The model's turn so far, as the next round re-sends it. */
  content: AssistantContentPart[] = [];
  calls: PendingCall[] = [];
  /** Calls of the caller's own tools this round. */
  clientCalls = 0;
  finishPart?: Extract<CanonicalStreamPart, { type: "finish" }>;
  private callSequence = 0;
  private readonly hiddenInputs = new Set<string>();
  /** The caller's own calls of the round, passed on once the server calls have their results. */
  private readonly heldClientParts = new HeldParts();
  private readonly clientIndexes = new Map<string, number>();
  /** The round's open text and reasoning blocks, in pieces joined once at their end. */
  private readonly texts = new Map<string, TextPieces>();
  private readonly reasonings = new Map<string, TextPieces>();
  /** Only the first round's metadata reaches the client. */
  private metadataSent = false;

  constructor(
    private readonly session: ServerToolSession,
    private readonly activations: ReadonlyMap<ServerToolId, ServerToolActivation>,
    /** Makes call ids unique in the response. */
    private readonly requestId: string,
    private readonly native: NativeToolParts,
    /** What the gateway's tools found so far: a link to one in the text is a citation. */
    private readonly sources: ReadonlyMap<string, ServerToolSource>,
    /** The request of the round being received (the first one includes the tool definitions). */
    public request: CanonicalRequest,
  ) {}

  /** What the client sees of one upstream part of the current round (possibly nothing). */
  transform(part: CanonicalStreamPart): CanonicalStreamPart[] {
    switch (part.type) {
      case "response-metadata":
        if (this.metadataSent) return [];
        this.metadataSent = true;
        return [part];
      case "text-start": {
        const id = this.blockId(part.id);
        this.texts.set(id, new TextPieces());
        return [{ type: "text-start", id }];
      }
      case "text-delta": {
        const id = this.blockId(part.id);
        addPiece(this.texts, id, part.delta);
        return [{ type: "text-delta", id, delta: part.delta }];
      }
      case "text-end": {
        const id = this.blockId(part.id);
        const text = this.texts.get(id)?.text() ?? "";
        this.texts.delete(id);
        if (text !== "") this.content.push({ type: "text", text });
        const out: CanonicalStreamPart[] = findCitations(text, this.sources).map((citation) => ({
          type: "citation",
          id,
          citation,
        }));
        out.push({ type: "text-end", id });
        return out;
      }
      case "reasoning-start": {
        const id = this.blockId(part.id);
        this.reasonings.set(id, new TextPieces());
        return [{ type: "reasoning-start", id }];
      }
      case "reasoning-delta": {
        const id = this.blockId(part.id);
        addPiece(this.reasonings, id, part.delta);
        return [{ type: "reasoning-delta", id, delta: part.delta }];
      }
      case "reasoning-end": {
        const id = this.blockId(part.id);
        const text = this.reasonings.get(id)?.text() ?? "";
        this.reasonings.delete(id);
        if (text !== "" || part.providerState !== undefined) {
          this.content.push(
            part.providerState === undefined
              ? { type: "reasoning", text }
              : { type: "reasoning", text, providerState: part.providerState },
          );
        }
        const ended = { ...part };
        ended.id = id;
        return [ended];
      }
      case "tool-input-start": {
        if (this.session.toolNamed(part.name) !== undefined) {
          this.hiddenInputs.add(part.id);
          return [];
        }
        const started = { ...part };
        started.index = this.clientIndex(part.id);
        this.heldClientParts.push(started);
        return [];
      }
      case "tool-input-delta":
      case "tool-input-end":
        if (!this.hiddenInputs.has(part.id)) this.heldClientParts.push(part);
        return [];
      case "tool-call": {
        this.content.push({
          type: "tool-call",
          id: part.id,
          name: part.name,
          arguments: part.arguments,
          ...(part.providerState === undefined ? {} : { providerState: part.providerState }),
        });
        const tool = this.session.toolNamed(part.name);
        if (tool === undefined) {
          this.clientCalls += 1;
          const held = { ...part };
          held.index = this.clientIndex(part.id);
          this.heldClientParts.push(held);
          return [];
        }
        const call: ServerToolCall = {
          id: `hi${this.requestId.replaceAll("-", "x")}_${++this.callSequence}`,
          tool,
          input: this.session.readInput(tool, part.arguments),
          events: this.request.toolEvents || this.activations.get(tool)?.events === true,
        };
        this.calls.push({ call, upstreamId: part.id, argumentsJson: part.arguments });
        return [{ type: "server-tool-call", call }];
      }
      case "server-tool-call":
        this.keepNativeRecord(part.providerState);
        return [this.native.acceptCall(part, this.wantsEvents(part.call.tool))];
      case "server-tool-result":
        this.keepNativeRecord(part.providerState);
        return [this.native.acceptResult(part, this.wantsEvents(part.result.tool))];
      case "citation":
        return [{ type: "citation", id: this.blockId(part.id), citation: part.citation }];
      case "usage":
        return [];
      case "finish":
        this.finishPart = part;
        return [];
      default:
        return [part];
    }
  }

  /** The provider's record of its own call goes into the turn the next round re-sends. */
  private keepNativeRecord(providerState: OpaqueReasoningState | undefined): void {
    if (providerState !== undefined) this.content.push({ type: "native-tool", providerState });
  }

  private wantsEvents(tool: ServerToolId): boolean {
    return this.request.toolEvents || this.activations.get(tool)?.events === true;
  }

  /** The caller's calls held back this round, in order (taken once). */
  *takeClientParts(): Generator<CanonicalStreamPart> {
    yield* this.heldClientParts.take();
  }

  /** The next round, sent `request`, starts from nothing. */
  startRound(request: CanonicalRequest): void {
    this.request = request;
    this.round += 1;
    this.content = [];
    this.calls = [];
    this.clientCalls = 0;
    this.hiddenInputs.clear();
    this.heldClientParts.take();
    this.clientIndexes.clear();
    this.texts.clear();
    this.reasonings.clear();
    this.finishPart = undefined;
  }

  /** Block ids of later rounds are made distinct from the first round's (adapters restart theirs). */
  private blockId(id: string): string {
    return this.round === 1 ? id : `r${this.round}:${id}`;
  }

  /** The caller's calls are numbered among themselves: server calls in the same turn take no index. */
  private clientIndex(upstreamId: string): number {
    let index = this.clientIndexes.get(upstreamId);
    if (index === undefined) {
      index = this.clientIndexes.size;
      this.clientIndexes.set(upstreamId, index);
    }
    return index;
  }
}

function addPiece(blocks: Map<string, TextPieces>, id: string, piece: string): void {
  let pieces = blocks.get(id);
  if (pieces === undefined) {
    pieces = new TextPieces();
    blocks.set(id, pieces);
  }
  pieces.append(piece);
}

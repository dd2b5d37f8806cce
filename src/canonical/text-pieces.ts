/**
 * A text that arrives as deltas and is read once, at its end. Deltas are kept as pieces, never
 * concatenated one by one; pieces are joined into a chunk every PIECES_PER_CHUNK, because one
 * array of every delta of a long answer outgrows the young generation and is copied on each
 * growth and each collection: 64,000 deltas then cost more than three times 32,000.
 */
const PIECES_PER_CHUNK = 512;

export class TextPieces {
  private chunks: string[] | undefined;
  private pieces: string[] = [];
  /** Characters so far. */
  length = 0;

  append(piece: string): void {
    this.pieces.push(piece);
    this.length += piece.length;
    if (this.pieces.length < PIECES_PER_CHUNK) return;
    const chunk = this.pieces.join("");
    if (this.chunks === undefined) this.chunks = [chunk];
    else this.chunks.push(chunk);
    this.pieces = [];
  }

  /** The whole text (joined each time it is read: read it once). */
  text(): string {
    const tail = this.pieces.length === 1 ? this.pieces[0] : this.pieces.join("");
    if (this.chunks === undefined) return tail;
    return this.chunks.length === 1 ? this.chunks[0] + tail : this.chunks.join("") + tail;
  }
}

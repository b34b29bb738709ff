/**
 * The rows' JSON texts, kept outside the JavaScript heap: UTF-8 in blocks of bytes, each row
 * a block number, an offset and a length in typed arrays. A million texts as strings are a
 * million objects in V8's old generation, and every young-generation collection then costs
 * time in proportion to that old generation; a request that meets one waits for it (the worst
 * list's p99 over HTTP, bench/correlated.ts). Blocks are array buffers, which the collector
 * does not walk. A read decodes the row's bytes into a fresh string.
 *
 * A replaced or removed text leaves its bytes behind as dead; a block that is mostly dead has
 * its live texts copied to the block being written, and is dropped.
 */
import type { Submission } from "../../submission.ts";
import { submissionToText, writeSubmissionText, type WrittenPieces } from "./submission-text.ts";

const BLOCK_BYTES = 1 << 20;
/** Marks a slot without a text. */
const NONE = -1;

export class TextColumn {
  private blocks: Array<Uint8Array | undefined> = [];
  /** Bytes written into each block, and of those, bytes of texts since replaced or removed. */
  private written: number[] = [];
  private dead: number[] = [];
  /** The block new texts go into. */
  private current = NONE;
  private blockOf = new Int32Array(256).fill(NONE);
  private offsetOf = new Int32Array(256);
  private lengthOf = new Int32Array(256);
  /** The length of the text `write` wrote last, past its block's `written`. */
  private writtenLength = 0;
  private readonly pieces: WrittenPieces = { tails: new Map(), keys: new Map() };
  private readonly encoder = new TextEncoder();
  private readonly decoder = new TextDecoder();

  ensureCapacity(slots: number): void {
    if (slots <= this.blockOf.length) return;
    const capacity = Math.max(slots, this.blockOf.length * 2);
    const grow = (column: Int32Array, fill: number) => {
      const grown = new Int32Array(capacity).fill(fill);
      grown.set(column);
      return grown;
    };
    this.blockOf = grow(this.blockOf, NONE);
    this.offsetOf = grow(this.offsetOf, 0);
    this.lengthOf = grow(this.lengthOf, 0);
  }

  /** The text of `slot`, which must have one. */
  get(slot: number): string {
    const offset = this.offsetOf[slot]!;
    return this.decoder.decode(this.blocks[this.blockOf[slot]!]!.subarray(offset, offset + this.lengthOf[slot]!));
  }

  /**
   * Writes the submission's text (submission-text.ts) after the last text of the current block,
   * for `place` to give to a slot: straight into the block when `writeSubmissionText` can,
   * through `submissionToText`'s string otherwise. Throws (on a record JSON cannot write) before
   * any text is moved or dropped.
   */
  write(submission: Submission): void {
    if (this.current !== NONE) {
      const offset = this.written[this.current]!;
      const end = writeSubmissionText(submission, this.blocks[this.current]!, offset, this.pieces);
      if (end >= 0) {
        this.writtenLength = end - offset;
        return;
      }
    }
    const text = submissionToText(submission);
    // UTF-8 takes at most three bytes per UTF-16 unit
    const block = this.blockWithRoom(text.length * 3);
    this.writtenLength = this.encoder.encodeInto(text, this.blocks[block]!.subarray(this.written[block]!)).written;
  }

  /** Gives the text `write` wrote last to `slot` (within the capacity), replacing any it had. */
  place(slot: number): void {
    const block = this.current;
    const offset = this.written[block]!;
    this.written[block] = offset + this.writtenLength;
    this.remove(slot);
    this.locate(slot, block, offset, this.writtenLength);
  }

  /** Drops the text of `slot`, if it has one. */
  remove(slot: number): void {
    const block = this.blockOf[slot]!;
    if (block === NONE) return;
    this.blockOf[slot] = NONE;
    this.dead[block]! += this.lengthOf[slot]!;
    if (block !== this.current && this.dead[block]! * 2 > this.written[block]!) this.compact(block);
  }

  private locate(slot: number, block: number, offset: number, length: number): void {
    this.blockOf[slot] = block;
    this.offsetOf[slot] = offset;
    this.lengthOf[slot] = length;
  }

  /** The current block if it has `bytes` free, else a new one that does. */
  private blockWithRoom(bytes: number): number {
    const current = this.current === NONE ? undefined : this.blocks[this.current]!;
    if (current !== undefined && current.length - this.written[this.current]! >= bytes) return this.current;
    let block = this.blocks.indexOf(undefined);
    if (block < 0) block = this.blocks.length;
    this.blocks[block] = new Uint8Array(Math.max(BLOCK_BYTES, bytes));
    this.written[block] = 0;
    this.dead[block] = 0;
    this.current = block;
    return block;
  }

  /** Copies the live texts of `block` to the current block (as they are: no decoding) and drops it. */
  private compact(block: number): void {
    const from = this.blocks[block]!;
    for (let slot = 0; slot < this.blockOf.length; slot++) {
      if (this.blockOf[slot] !== block) continue;
      const offset = this.offsetOf[slot]!;
      const length = this.lengthOf[slot]!;
      const to = this.blockWithRoom(length);
      const at = this.written[to]!;
      this.blocks[to]!.set(from.subarray(offset, offset + length), at);
      this.written[to] = at + length;
      this.locate(slot, to, at, length);
    }
    this.blocks[block] = undefined;
  }
}

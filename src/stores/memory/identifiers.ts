/**
 * The memory store's identifier index: for each identifying field, a column of each row's
 * value as a hash (`hashOf`), kept by every insert and delete of the account's rows.
 * An erasure reads that column, a few bytes a row, never the rows themselves, and checks the
 * rows whose hash matches against their data, so a hash shared by two values never mixes them
 * up. A column rather than a map keeps the index at four bytes a row (bench/memory.ts: the
 * memory store's bytes per submission).
 */
import { identifierKey } from "../../store.ts";
import type { SubmissionData } from "../../submission.ts";

/** A slot whose row has no string value for the field, or no row. */
const NONE = -1;

export class IdentifierIndex {
  private readonly fields: readonly string[];
  private hashes: Int32Array[];

  constructor(fields: readonly string[]) {
    this.fields = fields;
    this.hashes = fields.map(() => new Int32Array(256).fill(NONE));
  }

  ensureCapacity(slots: number): void {
    this.hashes = this.hashes.map((column) => {
      if (slots <= column.length) return column;
      const grown = new Int32Array(Math.max(slots, column.length * 2)).fill(NONE);
      grown.set(column);
      return grown;
    });
  }

  add(slot: number, data: SubmissionData): void {
    for (let i = 0; i < this.fields.length; i++) {
      const field = this.fields[i]!;
      const value = data[field];
      this.hashes[i]![slot] = typeof value === "string" ? hashOf(value) : NONE;
    }
  }

  remove(slot: number): void {
    for (const column of this.hashes) column[slot] = NONE;
  }

  /** The slots whose row's `data[field]` is `value`; `dataAt` reads a live row's data. */
  find(field: string, value: string, dataAt: (slot: number) => SubmissionData | undefined): number[] {
    const column = this.hashes[this.fields.indexOf(field)];
    if (column === undefined) return [];
    const key = identifierKey(field, value);
    const hash = hashOf(value);
    const slots: number[] = [];
    for (let slot = 0; slot < column.length; slot++) {
      if (column[slot] !== hash) continue;
      const candidate = dataAt(slot)?.[field];
      if (typeof candidate === "string" && identifierKey(field, candidate) === key) slots.push(slot);
    }
    return slots;
  }
}

/**
 * FNV-1a over the UTF-16 units with ASCII capitals read as small letters, cut to 30 bits
 * (never NONE). Two values `identifierKey` makes equal, in any field, hash alike (it lowers at
 * most ASCII capitals), and `find` compares the keys of the rows whose hash matches, so the
 * column needs no key made for every row written (bench/store.ts, target 8: bulk load), nor
 * to know which fields ignore case.
 */
function hashOf(text: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    const unit = text.charCodeAt(i);
    hash = Math.imul(hash ^ (unit >= 0x41 && unit <= 0x5a ? unit | 0x20 : unit), 0x01000193);
  }
  return hash & 0x3fffffff;
}

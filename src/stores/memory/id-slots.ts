/**
 * The memory store's id index: which slot holds the row with a given submission id. A hash table
 * with open addressing in typed arrays (each entry a slot number, each slot's hash in a column
 * beside it) rather than a `Map`: a few bytes a row instead of a Map entry, and nothing per row
 * for the garbage collector to trace or to copy when the table grows, which a bulk import of a
 * million rows otherwise pays for (bench/store.ts, target 8). Ids are compared as strings, so two
 * ids with one hash never mix up.
 */

/** An empty place in the table. */
const EMPTY = -1;

/**
 * Imported rows bring their own ids: with a hash known in advance, ids chosen to share places
 * would make every insert and lookup a walk over all of them. A seed per process keeps such
 * ids from being computed ahead.
 */
const HASH_SEED = (Math.random() * 0x1_0000_0000) >>> 0;

export class IdSlots {
  /** Places, each EMPTY or a slot; linear probing from `hash & mask`, at most half full. */
  private table = new Int32Array(512).fill(EMPTY);
  private mask = 511;
  private hashOfSlot = new Int32Array(256);
  private count = 0;

  /** `ids[slot]` is the id of the row in `slot`. */
  constructor(private readonly ids: readonly string[]) {}

  get size(): number {
    return this.count;
  }

  /** Room for slots below `slots`. */
  ensureCapacity(slots: number): void {
    if (slots <= this.hashOfSlot.length) return;
    const grown = new Int32Array(Math.max(slots, this.hashOfSlot.length * 2));
    grown.set(this.hashOfSlot);
    this.hashOfSlot = grown;
  }

  /** The slot of the row with this id, or undefined; `hash` is `idHash(id)`. */
  get(id: string, hash = idHash(id)): number | undefined {
    for (let place = hash & this.mask; ; place = (place + 1) & this.mask) {
      const slot = this.table[place]!;
      if (slot === EMPTY) return undefined;
      if (this.hashOfSlot[slot] === hash && this.ids[slot] === id) return slot;
    }
  }

  /** Indexes `slot` under `ids[slot]`, an id no other indexed slot has; `hash` is its `idHash`. */
  add(slot: number, hash = idHash(this.ids[slot]!)): void {
    if ((this.count + 1) * 2 > this.table.length) this.grow();
    this.hashOfSlot[slot] = hash;
    this.place(slot, hash);
    this.count++;
  }

  /** Drops `slot`, which must be indexed under `ids[slot]`. */
  remove(slot: number): void {
    const mask = this.mask;
    let place = this.hashOfSlot[slot]! & mask;
    while (this.table[place] !== slot) {
      if (this.table[place] === EMPTY) throw new Error(`slot ${slot} is not in the id index`);
      place = (place + 1) & mask;
    }
    // backward-shift deletion: move up each later entry of the run that may sit in the hole
    let hole = place;
    for (let next = (hole + 1) & mask; this.table[next] !== EMPTY; next = (next + 1) & mask) {
      const home = this.hashOfSlot[this.table[next]!]! & mask;
      // the entry at `next` may move to `hole` unless its home lies cyclically in (hole, next]
      if (((next - home) & mask) >= ((next - hole) & mask)) {
        this.table[hole] = this.table[next]!;
        hole = next;
      }
    }
    this.table[hole] = EMPTY;
    this.count--;
  }

  private place(slot: number, hash: number): void {
    let place = hash & this.mask;
    while (this.table[place] !== EMPTY) place = (place + 1) & this.mask;
    this.table[place] = slot;
  }

  private grow(): void {
    const old = this.table;
    this.table = new Int32Array(old.length * 2).fill(EMPTY);
    this.mask = this.table.length - 1;
    for (const slot of old) if (slot !== EMPTY) this.place(slot, this.hashOfSlot[slot]!);
  }
}

/**
 * An id's place in the table: FNV-1a over the UTF-16 units. A caller that looks an id up and
 * then adds it passes the hash to both, so the id is read once (bench/store.ts, target 8).
 */
export function idHash(id: string): number {
  let hash = 0x811c9dc5 ^ HASH_SEED;
  for (let i = 0; i < id.length; i++) hash = Math.imul(hash ^ id.charCodeAt(i), 0x01000193);
  // FNV's low bits depend only on the input's low bits, and the table's place is the low bits:
  // mix every bit into them (MurmurHash3's finalizer)
  hash = Math.imul(hash ^ (hash >>> 16), 0x85ebca6b);
  hash = Math.imul(hash ^ (hash >>> 13), 0xc2b2ae35);
  return hash ^ (hash >>> 16);
}

/**
 * The memory store's id index: which slot holds the row with a given submission id. A hash table
 * with open addressing in one typed array (each place a slot number and its id's hash) rather
 * than a `Map`: a few bytes a row instead of a Map entry, and nothing per row
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
  /**
   * Places, each two entries: a slot (EMPTY when free) and the hash of its id, side by side so
   * that a probe reads one place rather than the slot here and its hash in a column by slot, a
   * second cache miss for every place a lookup passes in a table of a million rows. Linear
   * probing from `hash & mask`, at most half full.
   */
  private table = new Int32Array(1024).fill(EMPTY);
  private mask = 511;
  private count = 0;

  /** `ids[slot]` is the id of the row in `slot`. */
  constructor(private readonly ids: readonly string[]) {}

  get size(): number {
    return this.count;
  }

  /** The slot of the row with this id, or undefined; `hash` is `idHash(id)`. */
  get(id: string, hash = idHash(id)): number | undefined {
    const table = this.table;
    for (let place = hash & this.mask; ; place = (place + 1) & this.mask) {
      const slot = table[place * 2]!;
      if (slot === EMPTY) return undefined;
      if (table[place * 2 + 1] === hash && this.ids[slot] === id) return slot;
    }
  }

  /** Indexes `slot` under `ids[slot]`, an id no other indexed slot has; `hash` is its `idHash`. */
  add(slot: number, hash = idHash(this.ids[slot]!)): void {
    if ((this.count + 1) * 2 > this.mask + 1) this.grow();
    this.place(slot, hash);
    this.count++;
  }

  /** Drops `slot`, which must be indexed under `ids[slot]`. */
  remove(slot: number): void {
    const table = this.table;
    const mask = this.mask;
    let place = idHash(this.ids[slot]!) & mask;
    while (table[place * 2] !== slot) {
      if (table[place * 2] === EMPTY) throw new Error(`slot ${slot} is not in the id index`);
      place = (place + 1) & mask;
    }
    // backward-shift deletion: move up each later entry of the run that may sit in the hole
    let hole = place;
    for (let next = (hole + 1) & mask; table[next * 2] !== EMPTY; next = (next + 1) & mask) {
      const home = table[next * 2 + 1]! & mask;
      // the entry at `next` may move to `hole` unless its home lies cyclically in (hole, next]
      if (((next - home) & mask) >= ((next - hole) & mask)) {
        table[hole * 2] = table[next * 2]!;
        table[hole * 2 + 1] = table[next * 2 + 1]!;
        hole = next;
      }
    }
    table[hole * 2] = EMPTY;
    this.count--;
  }

  private place(slot: number, hash: number): void {
    const table = this.table;
    let place = hash & this.mask;
    while (table[place * 2] !== EMPTY) place = (place + 1) & this.mask;
    table[place * 2] = slot;
    table[place * 2 + 1] = hash;
  }

  private grow(): void {
    const old = this.table;
    this.table = new Int32Array(old.length * 2).fill(EMPTY);
    this.mask = old.length - 1;
    for (let place = 0; place < old.length; place += 2) if (old[place] !== EMPTY) this.place(old[place]!, old[place + 1]!);
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

/**
 * A sorted list of row slots (small integers) in the list order, kept in chunks of at most
 * CHUNK slots: an insert or delete anywhere moves at most one chunk, appending in order is the
 * fast path, and finding a position by index or by key costs a walk over chunk sizes plus two
 * binary searches. One typed array per chunk keeps a slot at 4 bytes.
 */
const CHUNK = 1024;

/** How slots compare: the account's rows decide, the list only keeps them in that order. */
export interface SlotOrder {
  compare(a: number, b: number): number;
  /** True when the row in `slot` sorts before `probe`. */
  isBefore(slot: number, probe: Probe): boolean;
}

/**
 * A place in the list order that need not be a row: a time and, optionally, an id. Rows at
 * that time sort before it when `tieAfter` (rows with that id included), after it otherwise.
 */
export interface Probe {
  time: number;
  id?: string;
  tieAfter: boolean;
}

export class SortedSlots {
  private chunks: Int32Array[] = [];
  private sizes: number[] = [];
  private count = 0;
  /** The chunk the last `at` landed in and its first index: walks read chunk after chunk. */
  private cachedChunk = 0;
  private cachedStart = 0;

  constructor(private readonly order: SlotOrder) {}

  get size(): number {
    return this.count;
  }

  insert(slot: number): void {
    this.cachedChunk = this.cachedStart = 0;
    this.count++;
    const last = this.chunks.length - 1;
    if (last < 0 || this.order.compare(this.lastOf(last), slot) < 0) {
      if (last < 0 || this.sizes[last] === CHUNK) {
        this.chunks.push(new Int32Array(CHUNK));
        this.sizes.push(0);
      }
      const tail = this.chunks.length - 1;
      this.chunks[tail]![this.sizes[tail]!++] = slot;
      return;
    }
    let c = this.firstChunkWhere((chunk) => this.order.compare(this.lastOf(chunk), slot) > 0);
    let position = this.searchChunk(c, (other) => this.order.compare(other, slot) > 0);
    if (this.sizes[c] === CHUNK) {
      this.split(c);
      if (position > CHUNK / 2) {
        position -= CHUNK / 2;
        c++;
      }
    }
    const chunk = this.chunks[c]!;
    const size = this.sizes[c]!;
    chunk.copyWithin(position + 1, position, size);
    chunk[position] = slot;
    this.sizes[c] = size + 1;
  }

  /** Removes `slot`, which must be in the list (found by its key, so its row must be unchanged). */
  remove(slot: number): void {
    const c = this.firstChunkWhere((chunk) => this.order.compare(this.lastOf(chunk), slot) >= 0);
    const position = this.searchChunk(c, (other) => this.order.compare(other, slot) >= 0);
    const chunk = this.chunks[c];
    if (chunk === undefined || chunk[position] !== slot) throw new Error(`slot ${slot} is not in the list`);
    this.cachedChunk = this.cachedStart = 0;
    this.count--;
    const size = this.sizes[c]! - 1;
    chunk.copyWithin(position, position + 1, size + 1);
    this.sizes[c] = size;
    if (size === 0) {
      this.chunks.splice(c, 1);
      this.sizes.splice(c, 1);
    } else if (c + 1 < this.chunks.length && size + this.sizes[c + 1]! <= CHUNK / 2) {
      this.mergeWithNext(c);
    } else if (c > 0 && size + this.sizes[c - 1]! <= CHUNK / 2) {
      this.mergeWithNext(c - 1);
    }
  }

  /** The slot at `index` (0 <= index < size). */
  at(index: number): number {
    const last = this.sizes.length - 1;
    let c = this.cachedChunk;
    let start = this.cachedStart;
    if (index >= this.count - this.sizes[last]!) {
      c = last;
      start = this.count - this.sizes[last]!;
    } else {
      while (index < start) start -= this.sizes[--c]!;
      while (index >= start + this.sizes[c]!) start += this.sizes[c++]!;
    }
    this.cachedChunk = c;
    this.cachedStart = start;
    return this.chunks[c]![index - start]!;
  }

  /** How many slots sort before `probe`: the index where rows at or after it begin. */
  countBefore(probe: Probe): number {
    const c = this.firstChunkWhere((chunk) => !this.order.isBefore(this.lastOf(chunk), probe));
    let before = 0;
    for (let i = 0; i < c; i++) before += this.sizes[i]!;
    return before + this.searchChunk(c, (other) => !this.order.isBefore(other, probe));
  }

  private lastOf(c: number): number {
    return this.chunks[c]![this.sizes[c]! - 1]!;
  }

  /** The first chunk whose last slot passes `test` (monotone over chunks), or chunks.length. */
  private firstChunkWhere(test: (chunk: number) => boolean): number {
    let low = 0;
    let high = this.chunks.length;
    while (low < high) {
      const middle = (low + high) >>> 1;
      if (test(middle)) high = middle;
      else low = middle + 1;
    }
    return low;
  }

  /** The first position in chunk `c` whose slot passes `test` (monotone), or its size. */
  private searchChunk(c: number, test: (slot: number) => boolean): number {
    const chunk = this.chunks[c];
    if (chunk === undefined) return 0;
    let low = 0;
    let high = this.sizes[c]!;
    while (low < high) {
      const middle = (low + high) >>> 1;
      if (test(chunk[middle]!)) high = middle;
      else low = middle + 1;
    }
    return low;
  }

  private split(c: number): void {
    const half = CHUNK / 2;
    const upper = new Int32Array(CHUNK);
    upper.set(this.chunks[c]!.subarray(half, CHUNK));
    this.chunks.splice(c + 1, 0, upper);
    this.sizes.splice(c + 1, 0, CHUNK - half);
    this.sizes[c] = half;
  }

  private mergeWithNext(c: number): void {
    this.chunks[c]!.set(this.chunks[c + 1]!.subarray(0, this.sizes[c + 1]!), this.sizes[c]!);
    this.sizes[c]! += this.sizes[c + 1]!;
    this.chunks.splice(c + 1, 1);
    this.sizes.splice(c + 1, 1);
  }
}

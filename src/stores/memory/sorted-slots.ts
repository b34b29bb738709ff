/**
 * A sorted list of row slots (small integers) in the list order, kept in chunks of at most
 * CHUNK slots: an insert or delete anywhere moves at most one chunk, appending in order is the
 * fast path, and finding a position by index or by key costs binary searches over the chunks'
 * first indexes and within one chunk, never a walk over every chunk (a list of all of a big
 * account's rows has thousands). One typed array per chunk keeps a slot at 4 bytes.
 */
const CHUNK = 1024;
/** No slot. */
const NONE = -1;

/** How slots compare: the account's rows decide, the list only keeps them in that order. */
export interface SlotOrder {
  compare(a: number, b: number): number;
  /** The row's time, which `compare` orders by first. */
  timeAt(slot: number): number;
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
  /** starts[c]: the index of chunk c's first slot, correct for the chunks before `validStarts`. */
  private starts: number[] = [];
  private validStarts = 0;
  private count = 0;
  /** The list's last slot (NONE when empty), kept beside the chunks: an append reads no chunk to compare. */
  private last = NONE;
  /**
   * While rows are appended (an import's rows come in time order), the last chunk, its size,
   * which `sizes` holds only once `settle` has run, and the last slot's time: an append then
   * reads this object and writes the chunk, where it read `chunks`, `sizes` and the account's
   * times, each a cache miss for a filter combination's list met again after hundreds of rows.
   * Undefined otherwise.
   */
  private tail: Int32Array | undefined;
  private tailSize = 0;
  private lastTime = 0;
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
    const time = this.order.timeAt(slot);
    const tail = this.tail;
    if (tail !== undefined && this.tailSize < CHUNK && (time > this.lastTime || (time === this.lastTime && this.order.compare(this.last, slot) < 0))) {
      tail[this.tailSize++] = slot;
      this.last = slot;
      this.lastTime = time;
      return;
    }
    this.settle();
    if (this.last === NONE || this.order.compare(this.last, slot) < 0) {
      const last = this.chunks.length - 1;
      if (last < 0 || this.sizes[last] === CHUNK) {
        this.chunks.push(new Int32Array(CHUNK));
        this.sizes.push(0);
      }
      const c = this.chunks.length - 1;
      this.chunks[c]![this.sizes[c]!++] = slot;
      this.last = slot;
      this.tail = this.chunks[c];
      this.tailSize = this.sizes[c]!;
      this.lastTime = time;
      return;
    }
    let c = this.firstChunkWhere((chunk) => this.order.compare(this.lastOf(chunk), slot) > 0);
    let position = this.searchChunk(c, (other) => this.order.compare(other, slot) > 0);
    this.validStarts = Math.min(this.validStarts, c + 1);
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
    this.settle();
    const c = this.firstChunkWhere((chunk) => this.order.compare(this.lastOf(chunk), slot) >= 0);
    const position = this.searchChunk(c, (other) => this.order.compare(other, slot) >= 0);
    const chunk = this.chunks[c];
    if (chunk === undefined || chunk[position] !== slot) throw new Error(`slot ${slot} is not in the list`);
    this.cachedChunk = this.cachedStart = 0;
    // chunk c may merge into the one before it, which keeps its start
    this.validStarts = Math.min(this.validStarts, c);
    this.count--;
    const size = this.sizes[c]! - 1;
    chunk.copyWithin(position, position + 1, size + 1);
    this.sizes[c] = size;
    if (slot === this.last) this.last = this.count === 0 ? NONE : position > 0 ? chunk[position - 1]! : this.lastOf(c - 1);
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
    this.settle();
    let c = this.cachedChunk;
    let start = this.cachedStart;
    // the chunk of the last `at` or the one next to it (a walk), else a binary search
    if (index < start || index >= start + this.sizes[c]!) {
      if (index >= start + this.sizes[c]! && c + 1 < this.sizes.length && index < start + this.sizes[c]! + this.sizes[c + 1]!) {
        start += this.sizes[c++]!;
      } else if (index < start && c > 0 && index >= start - this.sizes[c - 1]!) {
        start -= this.sizes[--c]!;
      } else {
        this.validateStarts();
        let low = 0;
        let high = this.starts.length - 1;
        while (low < high) {
          const middle = (low + high + 1) >>> 1;
          if (this.starts[middle]! <= index) low = middle;
          else high = middle - 1;
        }
        c = low;
        start = this.starts[low]!;
      }
    }
    this.cachedChunk = c;
    this.cachedStart = start;
    return this.chunks[c]![index - start]!;
  }

  /** How many slots sort before `probe`: the index where rows at or after it begin. */
  countBefore(probe: Probe): number {
    this.settle();
    const c = this.firstChunkWhere((chunk) => !this.order.isBefore(this.lastOf(chunk), probe));
    if (c === this.chunks.length) return this.count;
    this.validateStarts();
    return this.starts[c]! + this.searchChunk(c, (other) => !this.order.isBefore(other, probe));
  }

  /** Ends a run of appends (see `tail`): `sizes` holds the last chunk's size again. */
  private settle(): void {
    if (this.tail === undefined) return;
    this.sizes[this.sizes.length - 1] = this.tailSize;
    this.tail = undefined;
  }

  /** Brings `starts` up to date after inserts and removals before the last chunk. */
  private validateStarts(): void {
    const chunks = this.sizes.length;
    if (this.validStarts >= chunks && this.starts.length === chunks) return;
    this.starts.length = chunks;
    let c = Math.min(this.validStarts, chunks);
    let start = c === 0 ? 0 : this.starts[c - 1]! + this.sizes[c - 1]!;
    for (; c < chunks; c++) {
      this.starts[c] = start;
      start += this.sizes[c]!;
    }
    this.validStarts = chunks;
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

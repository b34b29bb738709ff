/**
 * Submission ids are UUIDv7 (RFC 9562): time-ordered, so new rows land at the end of the
 * primary-key index, and monotonic for one generator, so ids made in the same millisecond
 * still sort in the order they were made.
 */

export interface NewSubmissionId {
  id: string;
  /** The epoch milliseconds inside the id: the submission's `createdAt`. */
  millis: number;
}

/**
 * A source of ids that never go backwards, even when the clock does (an NTP step): an id
 * made in a millisecond at or before the last one continues from the last one. Each handler
 * has its own, so no state is shared between handlers (or tests) in one process.
 */
export function createSubmissionIdGenerator(clock: () => number = Date.now): () => NewSubmissionId {
  let lastMillis = -1;
  let counter = 0; // the 12-bit rand_a field, used as a counter inside one millisecond
  return () => {
    const now = clock();
    if (now > lastMillis) {
      lastMillis = now;
      counter = randomBits12() & 0x7ff; // start in the lower half so the counter has room to grow
    } else if (++counter > 0xfff) {
      // More than ~2k ids in one millisecond: borrow the next millisecond rather than lose order.
      lastMillis += 1;
      counter = 0;
    }
    const bytes = new Uint8Array(16);
    bytes.set(randomBytes(8), 8);
    let millis = lastMillis;
    for (let i = 5; i >= 0; i--) {
      bytes[i] = millis % 256;
      millis = Math.floor(millis / 256);
    }
    bytes[6] = 0x70 | (counter >> 8);
    bytes[7] = counter & 0xff;
    bytes[8] = 0x80 | (bytes[8]! & 0x3f);
    return { id: formatUuid(bytes), millis: lastMillis };
  };
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** Canonical lower-case UUID text, the only form formsink hands out. */
export function isSubmissionId(value: string): boolean {
  return UUID.test(value);
}

// Random bytes drawn 4 KiB at a time: one getRandomValues call per ~400 ids instead of two per id.
const pool = new Uint8Array(4096);
let poolOffset = pool.length;

/** The next `count` bytes of the pool, valid until the next call. */
function randomBytes(count: number): Uint8Array {
  if (poolOffset + count > pool.length) {
    crypto.getRandomValues(pool);
    poolOffset = 0;
  }
  poolOffset += count;
  return pool.subarray(poolOffset - count, poolOffset);
}

function randomBits12(): number {
  const [high, low] = randomBytes(2);
  return ((high! << 8) | low!) & 0xfff;
}

const HEX = Array.from({ length: 256 }, (_, byte) => byte.toString(16).padStart(2, "0"));

function formatUuid(bytes: Uint8Array): string {
  let text = "";
  for (let i = 0; i < 16; i++) {
    if (i === 4 || i === 6 || i === 8 || i === 10) text += "-";
    text += HEX[bytes[i]!]!;
  }
  return text;
}

/**
 * Submission ids are UUIDv7 (RFC 9562): time-ordered, so new rows land at the end of the
 * primary-key index, and monotonic for one generator, so ids made in the same millisecond
 * still sort in the order they were made.
 */
import { pooledRandomBytes, toHex } from "./hex.ts";

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
    bytes.set(pooledRandomBytes(8), 8);
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

function randomBits12(): number {
  const [high, low] = pooledRandomBytes(2);
  return ((high! << 8) | low!) & 0xfff;
}

function formatUuid(bytes: Uint8Array): string {
  const hex = toHex(bytes);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

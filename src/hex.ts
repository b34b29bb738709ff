const HEX = Array.from({ length: 256 }, (_, byte) => byte.toString(16).padStart(2, "0"));

/** Bytes as lower-case hex, two digits each: how keys and hashes are written down. */
export function toHex(bytes: ArrayBuffer | Uint8Array): string {
  const view = bytes instanceof Uint8Array ? bytes : new Uint8Array(bytes);
  let text = "";
  for (let i = 0; i < view.length; i++) text += HEX[view[i]!]!;
  return text;
}

/** `length` random bytes (from the platform's CSPRNG) as hex. */
export function randomHex(length: number): string {
  return toHex(crypto.getRandomValues(new Uint8Array(length)));
}

// Random bytes for ids drawn 4 KiB at a time: one getRandomValues call per few hundred ids
// instead of one or two per id, which cost more than the rest of an import's row.
const pool = new Uint8Array(4096);
let poolOffset = pool.length;

/** The next `count` (at most 4096) random bytes of a pool, valid until the next call. */
export function pooledRandomBytes(count: number): Uint8Array {
  if (poolOffset + count > pool.length) {
    crypto.getRandomValues(pool);
    poolOffset = 0;
  }
  poolOffset += count;
  return pool.subarray(poolOffset - count, poolOffset);
}

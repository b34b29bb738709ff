/** Bytes as lower-case hex, two digits each: how keys and hashes are written down. */
export function toHex(bytes: ArrayBuffer | Uint8Array): string {
  return Array.from(bytes instanceof Uint8Array ? bytes : new Uint8Array(bytes), (byte) => byte.toString(16).padStart(2, "0")).join("");
}

/** `length` random bytes (from the platform's CSPRNG) as hex. */
export function randomHex(length: number): string {
  return toHex(crypto.getRandomValues(new Uint8Array(length)));
}

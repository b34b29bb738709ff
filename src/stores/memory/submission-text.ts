/**
 * A submission as the memory store keeps it, both ways: one JSON text per row, which costs the
 * garbage collector nothing (text-column.ts keeps it as bytes), is parsed afresh on every read
 * (so callers always get copies), and is already what an NDJSON export writes.
 */
import type { Submission } from "../../submission.ts";
import { detached } from "./strings.ts";

/**
 * The JSON text `JSON.stringify` gives, the contract's keys in the order of `Submission`
 * whatever the caller's order; fields added since (optional ones) follow, so the store keeps
 * them without a change here. A record of the usual shape is written as bytes by
 * `writeSubmissionText` instead, and comes here only when that cannot.
 */
export function submissionToText(s: Submission): string {
  const { submissionId, popupId, data, domain, userAgent, device, status, createdAt, ...added } = s;
  return JSON.stringify({ submissionId, popupId, data, domain, userAgent, device, status, createdAt, ...added });
}

export function textToSubmission(text: string): Submission {
  return JSON.parse(text) as Submission;
}

const FIELDS = ["submissionId", "popupId", "data", "domain", "userAgent", "device", "status", "createdAt"] as const;

/**
 * Writes the text `submissionToText` gives for `s` into `bytes` from `at`, as the UTF-8 that
 * `TextEncoder` makes of it, and returns where it ends; -1 when the record is not of the usual
 * shape, a string needs escaping, or the text might not fit, and the caller then encodes
 * `submissionToText`'s text (what lies past `at` is then no text's). The usual shape: the
 * contract's keys in order and no others, string fields, `data` a plain object, no string that
 * JSON escapes. Every row written comes through here (bench/store.ts, target 8: bulk load): one
 * pass over each string checks it and writes its bytes, where the text as a string cost a scan
 * of each by a regular expression, a joined copy and then its encoding (and `JSON.stringify`'s
 * escaping character by character cost more than all of the rest of an import). `written`
 * holds the column's pieces written before (`WrittenPieces`).
 */
export function writeSubmissionText(s: Submission, bytes: Uint8Array, at: number, written?: WrittenPieces): number {
  let field = 0;
  for (const key in s) if (key !== FIELDS[field++]) return -1;
  if (field !== FIELDS.length) return -1;
  const { submissionId, popupId, data, domain, userAgent, device, status, createdAt } = s;
  if (typeof submissionId !== "string" || typeof popupId !== "string" || typeof domain !== "string" || typeof userAgent !== "string") return -1;
  if (typeof device !== "string" || typeof status !== "string" || typeof createdAt !== "string") return -1;
  if (typeof data !== "object" || data === null || !isPlainObject(data)) return -1;
  at = writePlain(SUBMISSION_ID, submissionId, bytes, at);
  at = writePlain(POPUP_ID, popupId, bytes, at);
  if (at < 0) return -1;
  at = writeBytes(DATA, bytes, at);
  let first = true;
  // bench/store.ts (target 8, bulk load): `for...in` makes no array of the keys for every row
  // written. Its keys are those `Object.keys` gives, in that order, then the inherited ones,
  // which JSON leaves out.
  for (const key in data) {
    if (!hasOwnProperty.call(data, key)) continue;
    const value = data[key];
    if (typeof value === "string") {
      at = writeKey(first, key, bytes, at, written?.keys);
      at = writePlain(QUOTE, value, bytes, at);
      at = writeBytes(QUOTE, bytes, at);
    } else if (typeof value === "boolean") {
      at = writeKey(first, key, bytes, at, written?.keys);
      at = writeBytes(value ? TRUE : FALSE, bytes, at);
    } else {
      if (typeof value === "bigint" || (typeof value === "object" && value !== null && typeof (value as { toJSON?: unknown }).toJSON === "function")) {
        // JSON.stringify hands toJSON the key it is written under
        return -1;
      }
      const text = JSON.stringify(value);
      if (text === undefined) continue;
      at = writeKey(first, key, bytes, at, written?.keys);
      at = writeJson(text, bytes, at);
    }
    if (at < 0) return -1;
    first = false;
  }
  at = writeTail(s, bytes, at, written?.tails);
  at = writeUtf8(createdAt, PLAIN_ASCII, bytes, at);
  return writeBytes(END, bytes, at);
}

/**
 * Pieces of text a column wrote before and copies as bytes when a row has them again, rather
 * than checking and encoding them character by character: the tails (`writeTail`), and the
 * keys of `data` with their quotes and colon (`writeKey`), which rows of one form share.
 */
export interface WrittenPieces {
  tails: WrittenTails;
  keys: Map<string, Uint8Array>;
}

/** A tail as `writeTail` wrote it, and the values it holds besides its domain. */
interface WrittenTail {
  userAgent: string;
  device: string;
  status: string;
  bytes: Uint8Array;
}

/**
 * Tails already written (see `writeTail`), by domain: the store hashes each row's domain for
 * its tuple anyway (tuples.ts), where a user agent, the longest string of most rows and a fresh
 * one in every parsed row, would be hashed for this alone. Within a domain the user agent is
 * compared, which stops at its length or its first differing character when it is another.
 */
export type WrittenTails = Map<string, WrittenTail[]>;

/** How many keys of `data` a `WrittenPieces` keeps: the first ones met. */
const KEPT_KEYS = 64;

/**
 * Writes a key of `data` as `"key":`, after a comma unless it is the `first`, by a copy of the
 * bytes when `written` has them (keys of parsed rows are strings V8 keeps once and has hashed,
 * so the lookup reads none of their characters); -1 as `writePlain`.
 */
function writeKey(first: boolean, key: string, bytes: Uint8Array, at: number, written: Map<string, Uint8Array> | undefined): number {
  if (!first) at = writeBytes(COMMA, bytes, at);
  const piece = written?.get(key);
  if (piece !== undefined) return writeBytes(piece, bytes, at);
  const start = at;
  at = writePlain(QUOTE, key, bytes, at);
  at = writeBytes(QUOTE_COLON, bytes, at);
  if (at >= 0 && written !== undefined && written.size < KEPT_KEYS) written.set(detached(key), bytes.slice(start, at));
  return at;
}

/** How many domains a `WrittenTails` keeps tails for: the first ones met. */
const KEPT_DOMAINS = 64;
/** How many of one domain's tails are compared with a row's before the row's is written afresh. */
const TAILS_PER_DOMAIN = 32;

// bench/store.ts (target 8, bulk load): the domain, the user agent (most rows' longest string),
// the device and the status repeat from row to row in few combinations, so a combination met
// before is copied as bytes rather than checked and encoded character by character again.
/**
 * Writes the text from the end of `data` to the opening quote of `createdAt`'s value, as
 * `writePlain` would, by a copy of the bytes when `written` has them; -1 as `writePlain`.
 */
function writeTail(s: Submission, bytes: Uint8Array, at: number, written: WrittenTails | undefined): number {
  const { domain, userAgent, device, status } = s;
  const tails = written?.get(domain);
  if (tails !== undefined) {
    for (let i = 0; i < tails.length; i++) {
      const tail = tails[i]!;
      if (tail.device !== device || tail.status !== status || tail.userAgent !== userAgent) continue;
      if (at < 0 || at + tail.bytes.length > bytes.length) return -1;
      bytes.set(tail.bytes, at);
      return at + tail.bytes.length;
    }
  }
  const start = at;
  at = writePlain(DOMAIN, domain, bytes, at);
  at = writePlain(USER_AGENT, userAgent, bytes, at);
  at = writePlain(DEVICE, device, bytes, at);
  at = writePlain(STATUS, status, bytes, at);
  at = writeBytes(CREATED_AT, bytes, at);
  if (at >= 0 && written !== undefined && (tails === undefined ? written.size < KEPT_DOMAINS : tails.length < TAILS_PER_DOMAIN)) {
    const tail = { userAgent: detached(userAgent), device: detached(device), status: detached(status), bytes: bytes.slice(start, at) };
    if (tails === undefined) written.set(detached(domain), [tail]);
    else tails.push(tail);
  }
  return at;
}

/** The text's punctuation and keys, as bytes (all ASCII). */
const ascii = (text: string) => Uint8Array.from(text, (char) => char.charCodeAt(0));
const SUBMISSION_ID = ascii('{"submissionId":"');
const POPUP_ID = ascii('","popupId":"');
const DATA = ascii('","data":{');
const QUOTE = ascii('"');
const COMMA = ascii(',');
const QUOTE_COLON = ascii('":');
const TRUE = ascii('true');
const FALSE = ascii('false');
const DOMAIN = ascii('},"domain":"');
const USER_AGENT = ascii('","userAgent":"');
const DEVICE = ascii('","device":"');
const STATUS = ascii('","status":"');
const CREATED_AT = ascii('","createdAt":"');
const END = ascii('"}');

/** 1 for each ASCII character JSON writes as itself in a string, 0 for those it escapes. */
const PLAIN_ASCII = Uint8Array.from({ length: 0x80 }, (_, unit) => (unit < 0x20 || unit === 0x22 || unit === 0x5c ? 0 : 1));

/** 1 for every ASCII character: a JSON text's characters are all written as they are. */
const ANY_ASCII = new Uint8Array(0x80).fill(1);

/** Copies `piece`: the position after it, or -1 when `at` is or it does not fit. */
function writeBytes(piece: Uint8Array, bytes: Uint8Array, at: number): number {
  if (at < 0 || at + piece.length > bytes.length) return -1;
  for (let i = 0; i < piece.length; i++) bytes[at + i] = piece[i]!;
  return at + piece.length;
}

/**
 * Copies `piece`, then writes `text` as UTF-8, where `text` must need no escaping: the position
 * after them, or -1 when `at` is, when `text` needs escaping or when they might not fit.
 */
function writePlain(piece: Uint8Array, text: string, bytes: Uint8Array, at: number): number {
  return writeUtf8(text, PLAIN_ASCII, bytes, writeBytes(piece, bytes, at));
}

/** Writes `json` as UTF-8 (JSON text: no escaping needed, no lone surrogate): the position after it, or -1 as `writePlain`. */
function writeJson(json: string, bytes: Uint8Array, at: number): number {
  return writeUtf8(json, ANY_ASCII, bytes, at);
}

/**
 * Writes `text` as UTF-8: the position after it, or -1 when `at` is, when it might not fit, when
 * it holds a lone surrogate (JSON escapes it) or an ASCII character that `written` marks 0.
 */
function writeUtf8(text: string, written: Uint8Array, bytes: Uint8Array, at: number): number {
  if (at < 0 || at + text.length * 3 > bytes.length) return -1;
  for (let i = 0; i < text.length; i++) {
    const unit = text.charCodeAt(i);
    if (unit < 0x80) {
      if (written[unit] === 0) return -1;
      bytes[at++] = unit;
    } else if (unit < 0x800) {
      bytes[at++] = 0xc0 | (unit >> 6);
      bytes[at++] = 0x80 | (unit & 0x3f);
    } else if (unit < 0xd800 || unit > 0xdfff) {
      bytes[at++] = 0xe0 | (unit >> 12);
      bytes[at++] = 0x80 | ((unit >> 6) & 0x3f);
      bytes[at++] = 0x80 | (unit & 0x3f);
    } else {
      // a surrogate: paired, four bytes (in the room of its two units); alone, JSON escapes it
      const low = text.charCodeAt(i + 1);
      if (unit > 0xdbff || !(low >= 0xdc00 && low <= 0xdfff)) return -1;
      at = writeFourBytes(unit, low, bytes, at);
      i++;
    }
  }
  return at;
}

/** The UTF-8 of the code point of a surrogate pair. */
function writeFourBytes(high: number, low: number, bytes: Uint8Array, at: number): number {
  const point = 0x10000 + ((high - 0xd800) << 10) + (low - 0xdc00);
  bytes[at++] = 0xf0 | (point >> 18);
  bytes[at++] = 0x80 | ((point >> 12) & 0x3f);
  bytes[at++] = 0x80 | ((point >> 6) & 0x3f);
  bytes[at++] = 0x80 | (point & 0x3f);
  return at;
}

/** `Object.prototype.hasOwnProperty` as it was when this module loaded. */
const hasOwnProperty = Object.prototype.hasOwnProperty;

/** An object JSON.stringify writes as its own enumerable keys: no array, no boxed value, no toJSON. */
function isPlainObject(value: object): boolean {
  const prototype = Object.getPrototypeOf(value) as unknown;
  return (prototype === Object.prototype || prototype === null) && typeof (value as { toJSON?: unknown }).toJSON !== "function";
}

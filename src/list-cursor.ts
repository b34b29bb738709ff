/**
 * The list's `nextCursor`: where the next page starts (the last item of this one) and what it
 * was made for (the filters and the order), so that a cursor passed with other filters or
 * another `orderBy` is refused instead of paging through something else. Opaque to clients:
 * base64url of a small JSON array.
 */
import { type SubmissionCursor, type SubmissionFilter, SUBMISSION_FILTER_FIELDS } from "./store.ts";

const VERSION = 1;

type Order = "asc" | "desc";

/** A cursor for the page after `last` of the list of `filter` in `order`. */
export function encodeListCursor(filter: SubmissionFilter, order: Order, last: SubmissionCursor): string {
  const json = JSON.stringify([VERSION, order === "asc" ? "a" : "d", filterFingerprint(filter), last.createdAt, last.submissionId]);
  return btoa(json).replaceAll("+", "-").replaceAll("/", "_").replace(/=+$/, "");
}

export type DecodedCursor =
  | { ok: true; after: SubmissionCursor }
  | { ok: false; problem: "malformed" | "mismatched" };

/** The place a cursor continues from, if it is one of ours and was made for this filter and order. */
export function decodeListCursor(cursor: string, filter: SubmissionFilter, order: Order): DecodedCursor {
  const fields = parse(cursor);
  if (fields === undefined) return { ok: false, problem: "malformed" };
  const [, madeFor, fingerprint, createdAt, submissionId] = fields;
  if (madeFor !== (order === "asc" ? "a" : "d") || fingerprint !== filterFingerprint(filter)) return { ok: false, problem: "mismatched" };
  return { ok: true, after: { createdAt, submissionId } };
}

/** What the 400 says when `decodeListCursor` refuses a cursor (the list's and the export's). */
export const CURSOR_PROBLEMS = {
  malformed: "cursor is not a cursor this API made: pass an earlier answer's nextCursor as it is",
  mismatched: "cursor was made for other filters or another orderBy: pass the filters and orderBy of the request that gave it",
} as const;

function parse(cursor: string): [number, string, string, number, string] | undefined {
  if (!/^[A-Za-z0-9_-]{1,1024}$/.test(cursor)) return undefined;
  let fields: unknown;
  try {
    fields = JSON.parse(atob(cursor.replaceAll("-", "+").replaceAll("_", "/")));
  } catch {
    return undefined;
  }
  if (!Array.isArray(fields) || fields.length !== 5) return undefined;
  const [version, order, fingerprint, createdAt, submissionId] = fields as unknown[];
  const wellFormed =
    version === VERSION && (order === "a" || order === "d") && typeof fingerprint === "string" &&
    Number.isSafeInteger(createdAt) && typeof submissionId === "string" && submissionId.length > 0;
  return wellFormed ? (fields as [number, string, string, number, string]) : undefined;
}

/**
 * A short hash of the filter's fields (64-bit FNV-1a): enough to tell one list from another
 * that a client mixed up; a cursor is not a secret and guards nothing.
 */
function filterFingerprint(filter: SubmissionFilter): string {
  const text = JSON.stringify(SUBMISSION_FILTER_FIELDS.map((field) => filter[field]));
  // In two 32-bit halves (every list answer with a next page makes one; BigInt steps cost
  // more than the rest of the cursor): the prime is 2^40 + 0x1b3.
  let high = 0xcbf29ce4;
  let low = 0x84222325;
  for (let i = 0; i < text.length; i++) {
    low = (low ^ text.charCodeAt(i)) >>> 0;
    const lowProduct = low * 0x1b3;
    high = (high * 0x1b3 + Math.floor(lowProduct / 0x100000000) + ((low << 8) >>> 0)) >>> 0;
    low = lowProduct >>> 0;
  }
  return ((BigInt(high) << 32n) | BigInt(low)).toString(36);
}

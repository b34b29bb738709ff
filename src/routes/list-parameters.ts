/**
 * The list's query parameters, read without arktype. A list is the request a server answers
 * most and often its first, and arktype is most of what a start costs in time and memory
 * (bench/README.md, cold start and idle RSS): the route table loads it only for the routes that
 * need it. What `readListParameters` accepts, it reads exactly as `listQuery` (src/schemas.ts)
 * does, keys in the same order (test/http/list-parameters.test.ts); anything else it leaves to
 * `listQuery`, which also words every 400.
 */
import { codePointLength } from "../code-point-length.ts";
import { afterBound, beforeBound, parseInstant } from "../instant.ts";
import type { SubmissionFilter } from "../store.ts";
import { SUBMISSION_STATUSES } from "../submission.ts";

/** The names `listQuery` reads from the URL, in its order (the test compares them). */
export const LIST_QUERY_PARAMETERS = ["offset", "limit", "orderBy", "createdAfter", "createdBefore", "cursor", "device", "domain", "popupId", "status"] as const;

export interface ListParameters extends SubmissionFilter {
  limit: number;
  offset: number;
  orderBy: "created_at" | "created_at_desc";
  cursor?: string;
}

const DIGITS = /^\d+$/;

/** Code-point bounds of the text filters, as `listQuery` has them. */
const TEXT_LENGTHS = { popupId: 256, domain: 512, device: 128 } as const;

/** `given` read as `listQuery` reads it, or undefined when `listQuery` must look at it. */
export function readListParameters(given: Readonly<Record<string, string>>): ListParameters | undefined {
  const read: Record<string, unknown> = {};
  for (const name in given) {
    const text = given[name]!;
    let value: unknown;
    switch (name) {
      case "limit":
        value = wholeNumber(text, 1, 100);
        break;
      case "offset":
        value = wholeNumber(text, 0, Number.MAX_SAFE_INTEGER);
        break;
      case "orderBy":
        value = text === "created_at" || text === "created_at_desc" ? text : undefined;
        break;
      case "cursor":
        value = text;
        break;
      case "status":
        value = (SUBMISSION_STATUSES as readonly string[]).includes(text) ? text : undefined;
        break;
      case "popupId":
      case "domain":
      case "device": {
        const length = codePointLength(text);
        value = length >= 1 && length <= TEXT_LENGTHS[name] ? text : undefined;
        break;
      }
      case "createdAfter":
      case "createdBefore": {
        const instant = parseInstant(text);
        value = instant === undefined ? undefined : name === "createdAfter" ? afterBound(instant) : beforeBound(instant);
        break;
      }
      default:
        return undefined;
    }
    if (value === undefined) return undefined;
    read[name] = value;
  }
  // Defaults last, in the order listQuery adds them.
  read.offset ??= 0;
  read.limit ??= 10;
  read.orderBy ??= "created_at_desc";
  return read as unknown as ListParameters;
}

function wholeNumber(text: string, min: number, max: number): number | undefined {
  if (!DIGITS.test(text)) return undefined;
  const value = Number(text);
  return value >= min && value <= max ? value : undefined;
}

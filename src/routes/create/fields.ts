/**
 * A create's fields, checked without arktype. A create is what a server that collects leads
 * does all day, and arktype is most of what a start costs in time and memory (bench/README.md,
 * cold start and idle RSS): a server that only collects and lists leads never loads it. What
 * `readCreateFields` accepts, `createSubmissionBody` (src/schemas.ts) accepts and answers as the
 * same object (test/http/create-fields.test.ts); anything else it leaves to
 * `createSubmissionBody`, which also words every 400.
 */
import { codePointLength } from "../../code-point-length.ts";
import type { CreateSubmissionBody } from "../../schemas.ts";
import { DEVICES, MAX_FIELD_LENGTHS } from "../../submission.ts";

/** `fields` as `createSubmissionBody` answers it, or undefined when it must look at them. */
export function readCreateFields(fields: unknown): CreateSubmissionBody | undefined {
  if (!isObject(fields)) return undefined;
  let hasPopupId = false;
  let hasData = false;
  for (const name in fields) {
    const value = fields[name];
    let valid: boolean;
    switch (name) {
      case "popupId":
        valid = hasPopupId = isText(value, 1, MAX_FIELD_LENGTHS.popupId);
        break;
      case "data":
        valid = hasData = isObject(value);
        break;
      case "domain":
        valid = isText(value, 1, MAX_FIELD_LENGTHS.domain);
        break;
      case "device":
        valid = (DEVICES as readonly unknown[]).includes(value);
        break;
      case "userAgent":
        valid = isText(value, 0, MAX_FIELD_LENGTHS.userAgent);
        break;
      case "_gotcha":
        valid = typeof value === "string";
        break;
      default:
        return undefined;
    }
    if (!valid) return undefined;
  }
  return hasPopupId && hasData ? (fields as CreateSubmissionBody) : undefined;
}

/** A JSON object: what `Record<string, unknown>` that is not an array takes from a parsed body. */
function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function isText(value: unknown, min: number, max: number): boolean {
  if (typeof value !== "string") return false;
  // Code points lie between half the code units and all of them: most strings need no count.
  if (value.length >= 2 * min && value.length <= max) return true;
  const length = codePointLength(value);
  return length >= min && length <= max;
}

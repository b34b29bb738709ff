/**
 * A submission as the memory store keeps it, both ways: one JSON text per row, which costs the
 * garbage collector nothing (text-column.ts keeps it as bytes), is parsed afresh on every read
 * (so callers always get copies), and is already what an NDJSON export writes.
 */
import type { Submission } from "../../submission.ts";

/**
 * The JSON text `JSON.stringify` gives, the contract's keys in the order of `Submission`
 * whatever the caller's order; fields added since (optional ones) follow, so the store keeps
 * them without a change here.
 *
 * Every row written is serialised here, and `JSON.stringify`'s escaping of each character is
 * most of an import's time (bench/store.ts, target 8: bulk load). So a record of the usual shape
 * (the contract's keys in order and no others, string fields, `data` a plain object) whose
 * strings need no escaping at all, which a regular expression tells of each, is written by
 * joining them; anything else goes through `JSON.stringify`.
 */
export function submissionToText(s: Submission): string {
  return plainSubmissionText(s) ?? stringifiedSubmissionText(s);
}

export function textToSubmission(text: string): Submission {
  return JSON.parse(text) as Submission;
}

function stringifiedSubmissionText(s: Submission): string {
  const { submissionId, popupId, data, domain, userAgent, device, status, createdAt, ...added } = s;
  return JSON.stringify({ submissionId, popupId, data, domain, userAgent, device, status, createdAt, ...added });
}

const FIELDS = ["submissionId", "popupId", "data", "domain", "userAgent", "device", "status", "createdAt"] as const;
/** A character `JSON.stringify` would write otherwise than as itself (a surrogate, even paired, is left to it). */
const NEEDS_ESCAPE = /["\\\u0000-\u001f\ud800-\udfff]/;

/** The text of a record of the usual shape whose strings need no escaping; undefined for any other. */
function plainSubmissionText(s: Submission): string | undefined {
  let field = 0;
  for (const key in s) if (key !== FIELDS[field++]) return undefined;
  if (field !== FIELDS.length) return undefined;
  const { submissionId, popupId, data, domain, userAgent, device, status, createdAt } = s;
  if (typeof submissionId !== "string" || typeof popupId !== "string" || typeof domain !== "string" || typeof userAgent !== "string") return undefined;
  if (typeof device !== "string" || typeof status !== "string" || typeof createdAt !== "string") return undefined;
  if (typeof data !== "object" || data === null || !isPlainObject(data)) return undefined;
  if (NEEDS_ESCAPE.test(submissionId) || NEEDS_ESCAPE.test(popupId) || NEEDS_ESCAPE.test(domain) || NEEDS_ESCAPE.test(userAgent)) return undefined;
  if (NEEDS_ESCAPE.test(device) || NEEDS_ESCAPE.test(status) || NEEDS_ESCAPE.test(createdAt)) return undefined;
  let members = "";
  for (const key of Object.keys(data)) {
    const value = data[key];
    let text: string | undefined;
    if (typeof value === "string") {
      if (NEEDS_ESCAPE.test(value)) return undefined;
      text = `"${value}"`;
    } else if (typeof value === "boolean") {
      text = value ? "true" : "false";
    } else if (typeof value === "bigint" || (typeof value === "object" && value !== null && typeof (value as { toJSON?: unknown }).toJSON === "function")) {
      // JSON.stringify hands toJSON the key it is written under
      return undefined;
    } else {
      text = JSON.stringify(value);
      if (text === undefined) continue;
    }
    if (NEEDS_ESCAPE.test(key)) return undefined;
    members += `${members === "" ? "" : ","}"${key}":${text}`;
  }
  return `{"submissionId":"${submissionId}","popupId":"${popupId}","data":{${members}},"domain":"${domain}","userAgent":"${userAgent}","device":"${device}","status":"${status}","createdAt":"${createdAt}"}`;
}

/** An object JSON.stringify writes as its own enumerable keys: no array, no boxed value, no toJSON. */
function isPlainObject(value: object): boolean {
  const prototype = Object.getPrototypeOf(value) as unknown;
  return (prototype === Object.prototype || prototype === null) && typeof (value as { toJSON?: unknown }).toJSON !== "function";
}

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
 */
export function submissionToText(s: Submission): string {
  const { submissionId, popupId, data, domain, userAgent, device, status, createdAt, ...added } = s;
  return JSON.stringify({ submissionId, popupId, data, domain, userAgent, device, status, createdAt, ...added });
}

export function textToSubmission(text: string): Submission {
  return JSON.parse(text) as Submission;
}

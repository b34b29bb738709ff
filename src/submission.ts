/** The domain model every part of formsink speaks: a submission and its fields. */

export const SUBMISSION_STATUSES = ["pending", "completed"] as const;
export type SubmissionStatus = (typeof SUBMISSION_STATUSES)[number];

/** Why a submission was deleted: by an API call, by an erasure request, or by a retention rule. */
export type DeletionReason = "api" | "erasure" | "retention";

/** The most code points the text fields take (the seed's bounds); `userAgent` is the longest kept. */
export const MAX_FIELD_LENGTHS = { popupId: 256, domain: 512, userAgent: 1024 } as const;

/** What the service derives from a User-Agent; the contract fixes this list. */
export const DEVICES = ["desktop", "mobile", "tablet", "bot", "unknown"] as const;
export type Device = (typeof DEVICES)[number];

export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };

/** What the visitor typed into the popup, as key/value pairs. */
export type SubmissionData = { [key: string]: JsonValue };

/** A submission as the API shows it. The account it belongs to is never part of it. */
export interface Submission {
  submissionId: string;
  popupId: string;
  data: SubmissionData;
  domain: string;
  userAgent: string;
  device: Device;
  status: SubmissionStatus;
  /** ISO 8601 in UTC with milliseconds and a trailing `Z`. */
  createdAt: string;
}


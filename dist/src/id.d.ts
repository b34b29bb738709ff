/**
 * Submission ids are UUIDv7 (RFC 9562): time-ordered, so new rows land at the end of the
 * primary-key index, and monotonic for one generator, so ids made in the same millisecond
 * still sort in the order they were made.
 */
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
export declare function createSubmissionIdGenerator(clock?: () => number): () => NewSubmissionId;
/** Canonical lower-case UUID text, the only form formsink hands out. */
export declare function isSubmissionId(value: string): boolean;

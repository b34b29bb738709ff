/** Query semantics in plain TypeScript, for stores that filter in memory. */
import type { SubmissionFilter } from "../store.js";
import type { Submission } from "../submission.js";
export declare function matchesFilter(submission: Submission, filter: SubmissionFilter): boolean;
/** Ascending by creation time, ties broken by id: the one total order of every list. */
export declare function compareSubmissions(a: Submission, b: Submission): number;

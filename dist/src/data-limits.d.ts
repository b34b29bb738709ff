import type { SubmissionData } from "./submission.js";
export interface DataLimits {
    /** Fields counted at every depth of `data`. */
    maxDataFields: number;
    maxDataKeyLength: number;
    /** `data` itself is depth 1. */
    maxDataDepth: number;
}
/** Throws a 400 naming the place in `data` that breaks a limit. */
export declare function checkSubmissionData(data: SubmissionData, limits: DataLimits): void;

import { codePointLength } from "./code-point-length.ts";
import { HttpError } from "./http/errors.ts";
import type { SubmissionData } from "./submission.ts";

export interface DataLimits {
  /** Fields counted at every depth of `data`. */
  maxDataFields: number;
  maxDataKeyLength: number;
  /** `data` itself is depth 1. */
  maxDataDepth: number;
}

// Keys that mean something to JavaScript objects; a consumer that merges `data` into an
// object could have its prototype replaced, so they never get stored.
const RESERVED_KEYS = new Set(["__proto__", "constructor", "prototype"]);

/** Throws a 400 naming the place in `data` that breaks a limit. */
export function checkSubmissionData(data: SubmissionData, limits: DataLimits): void {
  let fields = 0;
  const visit = (value: unknown, path: string, depth: number): void => {
    if (typeof value === "number" && !Number.isFinite(value)) {
      throw new HttpError(400, `${path} must be a finite number`);
    }
    if (typeof value !== "object" || value === null) return;
    if (depth > limits.maxDataDepth) {
      throw new HttpError(400, `${path} is nested too deeply: data may be at most ${limits.maxDataDepth} levels deep`);
    }
    if (Array.isArray(value)) {
      value.forEach((item, index) => visit(item, `${path}[${index}]`, depth + 1));
      return;
    }
    for (const [key, item] of Object.entries(value)) {
      const at = `${path}.${key}`;
      if (RESERVED_KEYS.has(key)) throw new HttpError(400, `${at} is not allowed: "${key}" is a reserved key`);
      if (key.length === 0 || (key.length > limits.maxDataKeyLength && codePointLength(key) > limits.maxDataKeyLength)) {
        throw new HttpError(400, `data keys must be 1 to ${limits.maxDataKeyLength} characters long (at ${path})`);
      }
      if (++fields > limits.maxDataFields) {
        throw new HttpError(400, `data may have at most ${limits.maxDataFields} fields, counted at every depth`);
      }
      visit(item, at, depth + 1);
    }
  };
  visit(data, "data", 1);
}

import { type } from "arktype";
import { HttpError } from "./http/errors.js";
const MAX_PROBLEMS_SHOWN = 5;
const MAX_PROBLEM_LENGTH = 300;
/**
 * Runs an arktype schema and turns its problems into one 400 whose message names each field,
 * e.g. `limit must be at most 100 (was 101)`.
 */
export function validate(schema, input, where) {
    const result = schema(input);
    if (result instanceof type.errors) {
        const problems = result.map((error) => 
        // arktype says "x must be removed" for an undeclared key; say what that means here.
        error.code === "predicate" && error.expected === "removed"
            ? `${error.propString} is not a known ${where} field`
            : error.message);
        // Bounded: a body of thousands of unknown fields must not come back as a message of
        // thousands of clauses, nor a long value be echoed whole.
        const shown = problems.slice(0, MAX_PROBLEMS_SHOWN).map((problem) => problem.length > MAX_PROBLEM_LENGTH ? `${problem.slice(0, MAX_PROBLEM_LENGTH)}...` : problem);
        const more = problems.length - shown.length;
        throw new HttpError(400, shown.join("; ") + (more > 0 ? `; and ${more} more problem${more === 1 ? "" : "s"}` : ""));
    }
    return result;
}

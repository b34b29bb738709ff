import { type } from "arktype";
import { HttpError } from "./http/errors.ts";

/**
 * Runs an arktype schema and turns its problems into one 400 whose message names each field,
 * e.g. `limit must be at most 100 (was 101)`.
 */
export function validate<T>(schema: (input: unknown) => T | type.errors, input: unknown, where: string): T {
  const result = schema(input);
  if (result instanceof type.errors) {
    const problems = result.map((error) =>
      // arktype says "x must be removed" for an undeclared key; say what that means here.
      error.code === "predicate" && error.expected === "removed"
        ? `${error.propString} is not a known ${where} field`
        : error.message,
    );
    throw new HttpError(400, problems.join("; "));
  }
  return result;
}

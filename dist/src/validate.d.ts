import { type } from "arktype";
/**
 * Runs an arktype schema and turns its problems into one 400 whose message names each field,
 * e.g. `limit must be at most 100 (was 101)`.
 */
export declare function validate<T>(schema: (input: unknown) => T | type.errors, input: unknown, where: string): T;

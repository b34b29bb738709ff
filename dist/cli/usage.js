/** A mistake in how the command was called: printed with a hint, exit code 2. */
export class UsageError extends Error {
    name = "UsageError";
}
export const EXIT_OK = 0;
export const EXIT_FAILURE = 1;
export const EXIT_USAGE = 2;

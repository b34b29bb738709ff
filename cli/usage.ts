/** A mistake in how the command was called: printed with a hint, exit code 2. */
export class UsageError extends Error {
  override name = "UsageError";
}

export interface Io {
  stdout: (line: string) => void;
  stderr: (line: string) => void;
  env: Record<string, string | undefined>;
}

export const EXIT_OK = 0;
export const EXIT_FAILURE = 1;
export const EXIT_USAGE = 2;

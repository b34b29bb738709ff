/** A mistake in how the command was called: printed with a hint, exit code 2. */
export declare class UsageError extends Error {
    name: string;
}
export interface Io {
    stdout: (line: string) => void;
    stderr: (line: string) => void;
    env: Record<string, string | undefined>;
}
export declare const EXIT_OK = 0;
export declare const EXIT_FAILURE = 1;
export declare const EXIT_USAGE = 2;

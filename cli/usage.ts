import packageJson from "../package.json" with { type: "json" };

/** A mistake in how the command was called: printed with a hint, exit code 2. */
export class UsageError extends Error {
  override name = "UsageError";
}

/** A failure the command has explained in its message (a bad file, an unknown account): exit code 1. */
export class CommandError extends Error {
  override name = "CommandError";
}

/** What a command or the log says of a failure: its message (a thrown non-Error as text). */
export function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** A terminal to draw on: only present when the stream is one. */
export interface Terminal {
  write(text: string): void;
  columns: number;
}

export interface Io {
  stdout: (line: string) => void;
  stderr: (line: string) => void;
  env: Record<string, string | undefined>;
  /** Raw output (an export) to stdout; resolves when more may be written. */
  writeStdout: (chunk: Uint8Array) => Promise<void>;
  /** stderr, when it is a terminal: progress bars are drawn there and nowhere else. */
  stderrTerminal?: Terminal;
}

export const EXIT_OK = 0;
export const EXIT_FAILURE = 1;
export const EXIT_USAGE = 2;
/** The database cannot be used: its directory or file cannot be written, it is corrupt, the disk is full. */
export const EXIT_STORAGE = 3;
/**
 * Whoever read stdout stopped reading (`formsink export | head`): what a shell reports for a
 * Unix tool that SIGPIPE ended (128 + 13), so a pipeline under `set -o pipefail` sees it the same.
 */
export const EXIT_STDOUT_CLOSED = 141;

/** Raised by `Io.writeStdout` once the reader of stdout has closed it. */
export class StdoutClosed extends Error {
  constructor() {
    super("stdout was closed by its reader");
  }
}

/** The version of this formsink, from package.json (bundled into dist/cli/bin.js and the binary). */
export const VERSION: string = packageJson.version;

/** Running the `formsink` command in tests: as a real process, or in this process with captured streams. */
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { main } from "../../cli/main.ts";
import { collect } from "../support/process.ts";

/** `formsink` from source, as `npm start` runs it: the arguments for `node`, from any working directory. */
export const FORMSINK = ["--import", import.meta.resolve("tsx"), fileURLToPath(new URL("../../cli/bin.ts", import.meta.url))];

export interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
  /** What was drawn on stderr as a terminal (progress bars), when the run had one. */
  terminal: string;
}

export async function run(args: string[], env: Record<string, string> = {}): Promise<Run> {
  const child = spawn(process.execPath, [...FORMSINK, ...args], { env: { ...process.env, ...env } });
  return { ...(await collect(child)), terminal: "" };
}

/** The same command line run in this process (much faster than a new process per case). */
export async function runHere(args: string[], env: Record<string, string> = {}, options: { terminal?: boolean } = {}): Promise<Run> {
  let stdout = "";
  let stderr = "";
  let terminal = "";
  const decoder = new TextDecoder();
  const code = await main(args, {
    stdout: (line) => (stdout += `${line}\n`),
    stderr: (line) => (stderr += `${line}\n`),
    env: { ...env },
    writeStdout: async (chunk) => {
      stdout += decoder.decode(chunk, { stream: true });
    },
    stderrTerminal: options.terminal ? { write: (text) => void (terminal += text), columns: 100 } : undefined,
  });
  return { code, stdout, stderr, terminal };
}

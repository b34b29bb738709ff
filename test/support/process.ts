import type { ChildProcess } from "node:child_process";

export interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Everything the child writes, and its exit code, once it has exited. */
export function collect(child: ChildProcess): Promise<Run> {
  let stdout = "";
  let stderr = "";
  child.stdout!.on("data", (chunk) => (stdout += chunk));
  child.stderr!.on("data", (chunk) => (stderr += chunk));
  return new Promise((resolve) => child.on("close", (code) => resolve({ code, stdout, stderr })));
}

/** Resolves with the first match of `pattern` in what the child writes to `stream`. */
export function waitForOutput(child: ChildProcess, stream: "stdout" | "stderr", pattern: RegExp): Promise<RegExpExecArray> {
  return new Promise((resolve, reject) => {
    let seen = "";
    child[stream]!.on("data", (chunk) => {
      seen += chunk;
      const match = pattern.exec(seen);
      if (match) resolve(match);
    });
    child.on("close", () => reject(new Error(`process exited early: ${seen}`)));
  });
}

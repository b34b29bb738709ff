/**
 * Lets uvu run inside workerd: imported before uvu, it makes uvu queue the suites instead of
 * starting them on a timer (workerd forbids timers at module scope) and collects what uvu
 * prints, so the runner can pass it on. Run them with `runQueuedSuites()`.
 */
const globals = globalThis as { UVU_DEFER?: number; UVU_QUEUE?: unknown[][] };
globals.UVU_DEFER = 1;
globals.UVU_QUEUE = [["workerd"]];

let output = "";
console.log = (...parts: unknown[]) => {
  output += parts.map(String).join(" ");
};

/** Runs every suite defined so far and returns uvu's report. */
export async function runQueuedSuites(): Promise<string> {
  output = "";
  const { exec } = await import("uvu");
  try {
    await exec();
  } catch (error) {
    // uvu lets an error in a suite's hooks escape: report it as a failure, with what ran before.
    output += `\n${error instanceof Error ? error.stack : String(error)}\n  Total: 1\n  Passed: 0\n`;
  }
  return output;
}

import type { Terminal } from "./usage.ts";

export interface Progress {
  /** `done` of the total so far. */
  update(done: number): void;
  /** Draws the final state and moves to a new line. */
  finish(): void;
}

const REDRAW_EVERY_MS = 100;
const NO_PROGRESS: Progress = { update() {}, finish() {} };

/**
 * A one-line progress bar redrawn in place (`\r`) on a terminal, at most ten times a second:
 * `export [##########..........] 50% 500,000/1,000,000 rows 212,345 rows/s`. Without a
 * terminal (stderr piped to a file or a log) it draws nothing.
 */
export function progressBar(terminal: Terminal | undefined, label: string, total: number, now: () => number = () => performance.now()): Progress {
  if (!terminal) return NO_PROGRESS;
  const started = now();
  let drawnAt = -Infinity;
  let last = 0;
  const draw = (done: number) => {
    const elapsed = (now() - started) / 1000;
    const share = total > 0 ? Math.min(1, done / total) : 1;
    const rate = elapsed > 0 ? `${formatCount(Math.round(done / elapsed))} rows/s` : "";
    const counts = `${(share * 100).toFixed(0).padStart(3)}% ${formatCount(done)}/${formatCount(total)} rows ${rate}`.trimEnd();
    const width = Math.max(10, Math.min(40, terminal.columns - label.length - counts.length - 5));
    const filled = Math.round(share * width);
    const line = `${label} [${"#".repeat(filled)}${".".repeat(width - filled)}] ${counts}`;
    // \x1b[K clears what a longer line drew before
    terminal.write(`\r${line.slice(0, Math.max(0, terminal.columns - 1))}\x1b[K`);
  };
  return {
    update(done) {
      last = done;
      const at = now();
      if (at - drawnAt < REDRAW_EVERY_MS) return;
      drawnAt = at;
      draw(done);
    },
    finish() {
      draw(last);
      terminal.write("\n");
    },
  };
}

function formatCount(n: number): string {
  return n.toLocaleString("en-US");
}

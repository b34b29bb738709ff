/**
 * How a benchmark reports the targets: a table of figure next to target, and one
 * machine-readable `target:` line per figure that `bench/run.ts` collects into the summary.
 */
export interface TargetFigure {
  /** The target's number in the performance issue's table (1-10), or a name for another issue's. */
  target: number | string;
  /** What was measured, e.g. "HTTP GET by id, share of raw". */
  what: string;
  /** The figure as printed, e.g. "61% (33,100 req/s)". */
  measured: string;
  /** The target as printed, e.g. ">= 60%". */
  goal: string;
  met: boolean;
}

export function reportTargets(figures: readonly TargetFigure[]): void {
  console.log("");
  const rows = figures.map((f) => [String(f.target), f.what, f.measured, f.goal, f.met ? "met" : "MISSED"]);
  const header = ["#", "figure", "measured", "target", ""];
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]) => cells.map((c, i) => c.padEnd(widths[i]!)).join("  ").trimEnd();
  console.log(line(header));
  console.log(line(widths.map((w) => "-".repeat(w))));
  for (const row of rows) console.log(line(row));
  for (const f of figures) console.log(`target: ${JSON.stringify(f)}`);
}

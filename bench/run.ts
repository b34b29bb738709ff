/**
 * `npm run bench`: builds, runs every benchmark (each in its own process, one after another so
 * none shares the machine with another), and ends with every target's figure in one table.
 *
 *   node --import tsx bench/run.ts [--quick] [name ...]     (names: store http baseline memory cold-start export privacy events correlated postgres webhooks)
 */
import { execFileSync, spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import type { TargetFigure } from "./support/targets.ts";

const BENCHMARKS = ["store", "http", "baseline", "memory", "cold-start", "export", "privacy", "events", "correlated", "postgres", "webhooks"];
const args = process.argv.slice(2);
const quick = args.includes("--quick");
const chosen = args.filter((arg) => !arg.startsWith("--"));
const names = chosen.length > 0 ? chosen : BENCHMARKS;
const ROOT = fileURLToPath(new URL("../", import.meta.url));

execFileSync("npm", ["run", "build", "--silent"], { cwd: ROOT, stdio: "inherit" });

/**
 * The machine's CPU time so far, every core together, and the part of it the hypervisor gave to
 * other guests instead (steal), in clock ticks from /proc/stat; undefined where there is none.
 * On a shared virtual machine a benchmark's rates fall with steal though no code changed.
 */
function machineTicks(): { steal: number; total: number } | undefined {
  try {
    const [user, nice, system, idle, iowait, irq, softirq, steal] = readFileSync("/proc/stat", "utf8").split("\n", 1)[0]!.trim().split(/\s+/).slice(1, 9).map(Number);
    return { steal: steal!, total: user! + nice! + system! + idle! + iowait! + irq! + softirq! + steal! };
  } catch {
    return undefined;
  }
}

const figures: TargetFigure[] = [];
const failed: string[] = [];
const stolen: string[] = [];
const started = performance.now();
for (const name of names) {
  console.log(`\n=== bench/${name}.ts${quick ? " --quick" : ""}\n`);
  const before = machineTicks();
  const child = spawn(process.execPath, ["--import", "tsx", `bench/${name}.ts`, ...(quick ? ["--quick"] : [])], { cwd: ROOT, stdio: ["ignore", "pipe", "inherit"] });
  let pending = "";
  child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
    process.stdout.write(chunk);
    pending += chunk;
    const lines = pending.split("\n");
    pending = lines.pop()!;
    for (const line of lines) if (line.startsWith("target: ")) figures.push(JSON.parse(line.slice("target: ".length)) as TargetFigure);
  });
  const code = await new Promise<number | null>((resolve) => child.on("close", resolve));
  if (code !== 0) failed.push(name);
  const after = machineTicks();
  if (before && after && after.total > before.total) {
    const share = `${(((after.steal - before.steal) / (after.total - before.total)) * 100).toFixed(1)}%`;
    console.log(`\nsteal: the host took ${share} of this machine's CPU time while bench/${name}.ts ran`);
    stolen.push(`${name} ${share}`);
  }
}

const order = (f: TargetFigure) => (typeof f.target === "number" ? f.target : 100);
figures.sort((a, b) => order(a) - order(b));
const rows = figures.map((f) => [String(f.target), f.what, f.measured, f.goal, f.met ? "met" : "MISSED"]);
const header = ["#", "figure", "measured", "target", ""];
const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
const line = (cells: string[]) => cells.map((c, i) => c.padEnd(widths[i]!)).join("  ").trimEnd();
console.log(`\n=== summary (${((performance.now() - started) / 60_000).toFixed(1)} min${quick ? ", --quick" : ""})\n`);
console.log([line(header), line(widths.map((w) => "-".repeat(w))), ...rows.map(line)].join("\n"));
const met = figures.filter((f) => f.met).length;
if (stolen.length > 0) console.log(`\nsteal (CPU time the host gave other guests) while each ran: ${stolen.join(", ")}`);
console.log(`\nheadline: ${met} of ${figures.length} figures meet their targets${failed.length > 0 ? `; failed to run: ${failed.join(", ")}` : ""}`);
if (failed.length > 0) process.exitCode = 1;

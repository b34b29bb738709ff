/** Load generation for the benchmarks: autocannon, pinned to its own core when taskset exists. */
import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { fileURLToPath } from "node:url";
import autocannon from "autocannon";

export interface LoadResult {
  requestsPerSecond: number;
  /** Requests answered 2xx. */
  succeeded: number;
  p50Ms: number;
  p99Ms: number;
  errors: number;
  non2xx: number;
}

export interface LoadOptions {
  url: string;
  method?: "GET" | "POST";
  headers?: Record<string, string>;
  body?: string;
  /** Requests to send in turn on each connection (autocannon's `requests`), e.g. to vary a path. */
  requests?: autocannon.Request[];
  connections?: number;
  durationSeconds: number;
  /** Requests per second across all connections (autocannon's `overallRate`); unset, as fast as answered. */
  rate?: number;
  /** Stops after this many requests instead of after `durationSeconds` (autocannon's `amount`). */
  amount?: number;
}

export async function runLoad(options: LoadOptions): Promise<LoadResult> {
  const result = await autocannon({
    url: options.url,
    method: options.method ?? "GET",
    headers: options.headers,
    body: options.body,
    requests: options.requests,
    connections: options.connections ?? 10,
    pipelining: 1,
    duration: options.durationSeconds,
    ...(options.rate === undefined ? {} : { overallRate: options.rate }),
    ...(options.amount === undefined ? {} : { amount: options.amount }),
  });
  return {
    requestsPerSecond: result.requests.average,
    succeeded: result["2xx"],
    p50Ms: result.latency.p50,
    p99Ms: result.latency.p99,
    errors: result.errors + result.timeouts,
    non2xx: result.non2xx,
  };
}

let tasksetChecked: boolean | undefined;

/** True when `taskset` can pin processes here (the benchmarks then say so). */
export function canPin(): boolean {
  if (tasksetChecked === undefined) {
    try {
      execFileSync("taskset", ["-p", String(process.pid)], { stdio: "ignore" });
      tasksetChecked = true;
    } catch {
      tasksetChecked = false;
    }
  }
  return tasksetChecked;
}

/**
 * Pins this process to `core`, when it can: every thread it has (`-a`), since V8's and libuv's
 * threads start before this runs and `taskset -p` alone would pin only the main thread, leaving
 * the garbage collector's helpers free to run on the other core (the server's, for a load
 * generator). Threads started later inherit the pin.
 */
export function pinSelf(core: number): void {
  if (canPin()) execFileSync("taskset", ["-a", "-cp", String(core), String(process.pid)], { stdio: "ignore" });
}

const ROOT = new URL("../../", import.meta.url);

/**
 * Throws unless dist/ holds the build of the sources as they are now: each module of src/ and
 * adapters/ emitted after its source last changed, and the bundled CLI after every source it
 * bundles. The servers measured run dist/ (built-server.mjs), and a stale build would measure
 * other code than the checkout's.
 */
export function assertBuilt(): void {
  const stale = (why: string) => new Error(`bench: ${why}; the benchmark servers run the built package: run \`npm run build\` first`);
  const cli = new URL("dist/cli/bin.js", ROOT);
  if (!existsSync(cli)) throw stale("dist/ is missing");
  const cliBuilt = statSync(cli).mtimeMs;
  for (const folder of ["src", "adapters", "cli"]) {
    for (const file of readdirSync(new URL(`${folder}/`, ROOT), { recursive: true, encoding: "utf8" })) {
      if (!file.endsWith(".ts") || file.endsWith(".d.ts")) continue;
      const source = `${folder}/${file}`;
      const changed = statSync(new URL(source, ROOT)).mtimeMs;
      if (changed > cliBuilt) throw stale(`${source} changed after dist/cli/bin.js was built`);
      if (folder === "cli") continue;
      const built = new URL(`dist/${source.slice(0, -".ts".length)}.js`, ROOT);
      if (!existsSync(built)) throw stale(`dist/ has no build of ${source}`);
      if (changed > statSync(built).mtimeMs) throw stale(`${source} changed after it was built`);
    }
  }
}

/**
 * Starts a server script of bench/support/ in its own process (on `core` when it can pin), running
 * formsink from dist/ (built-server.mjs), and resolves with the URL it prints as its first stdout
 * line. `nodeOptions` go to node itself (e.g. `--cpu-prof`).
 */
export async function startServerProcess(
  script: URL,
  args: string[],
  core: number,
  nodeOptions: string[] = [],
): Promise<{ url: string; child: ChildProcess }> {
  assertBuilt();
  const hooks = fileURLToPath(new URL("./built-server.mjs", import.meta.url));
  const node = [process.execPath, ...nodeOptions, "--import", hooks, fileURLToPath(script), ...args];
  const [command, ...rest] = canPin() ? ["taskset", "-c", String(core), ...node] : node;
  const child = spawn(command!, rest, { stdio: ["ignore", "pipe", "inherit"] });
  const url = await new Promise<string>((resolve, reject) => {
    let seen = "";
    child.stdout!.on("data", (chunk: Buffer) => {
      seen += chunk.toString();
      const line = seen.split("\n")[0];
      if (seen.includes("\n") && line) resolve(line.trim());
    });
    child.once("exit", (code) => reject(new Error(`server ${args.join(" ")} exited with ${code} before it was ready`)));
  });
  return { url, child };
}

export function stopServerProcess(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null) return resolve();
    child.once("exit", () => resolve());
    child.kill("SIGTERM");
  });
}

/** CPU seconds a process has used (user + system), from /proc/<pid>/stat. */
export function cpuSeconds(pid: number): number {
  const { user, system } = cpuTimes(pid);
  return user + system;
}

/** CPU seconds a process has used, in its own code (`user`) and in the kernel's for it (`system`). */
export function cpuTimes(pid: number): { user: number; system: number } {
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ");
  return { user: Number(fields[11]) / 100, system: Number(fields[12]) / 100 }; // utime, stime in clock ticks (100 Hz)
}

/**
 * CPU seconds a process has used, split by thread: `event loop` (the main thread), `libSQL`
 * (the binding's threads, where the commits and their fsyncs run), `V8 and Node` (compilation,
 * GC and Node's other helpers), and `exited` (threads gone by now). Read from
 * /proc/<pid>/task/<tid>/stat.
 */
export function threadCpuSeconds(pid: number): Record<string, number> {
  const split: Record<string, number> = { "event loop": 0, libSQL: 0, "V8 and Node": 0 };
  let live = 0;
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    let stat: string;
    try {
      stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, "utf8");
    } catch {
      continue; // the thread exited meanwhile: counted in `exited`
    }
    const name = stat.slice(stat.indexOf("(") + 1, stat.lastIndexOf(")"));
    const fields = stat.slice(stat.lastIndexOf(") ") + 2).split(" ");
    const seconds = (Number(fields[11]) + Number(fields[12])) / 100;
    const kind = tid === String(pid) ? "event loop" : name.startsWith("tokio") ? "libSQL" : "V8 and Node";
    split[kind]! += seconds;
    live += seconds;
  }
  split.exited = cpuSeconds(pid) - live;
  return split;
}

export function formatTable(header: string[], rows: string[][]): string {
  const widths = header.map((title, i) => Math.max(title.length, ...rows.map((row) => row[i]!.length)));
  const line = (row: string[]) => row.map((cell, i) => (i === 0 ? cell.padEnd(widths[i]!) : cell.padStart(widths[i]!))).join("  ");
  return [line(header), widths.map((w) => "-".repeat(w)).join("  "), ...rows.map(line)].join("\n");
}

/**
 * With more than one store kind, runs this benchmark again once per kind, each in a process of
 * its own (so neither's memory or caches weigh on the other's figures), and exits; with one,
 * returns it.
 */
export async function oneStorePerProcess<K extends string>(script: string, kinds: readonly K[]): Promise<K> {
  if (kinds.length === 1) return kinds[0]!;
  for (const kind of kinds) {
    execFileSync(process.execPath, [...process.execArgv, fileURLToPath(script), ...process.argv.slice(2), "--store", kind], { stdio: "inherit" });
  }
  process.exit(0);
}

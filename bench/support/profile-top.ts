/**
 * The top of a V8 CPU profile (`node --cpu-prof`, e.g. from `bench/http.ts --profile`): the
 * functions with the most self time, the self time per package or source file, and the
 * functions with the most time including what they call.
 *
 *   node --import tsx bench/support/profile-top.ts <file.cpuprofile> [rows]
 */
import { readFileSync } from "node:fs";

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  hitCount?: number;
  children?: number[];
}

interface Profile {
  nodes: ProfileNode[];
  samples: number[];
}

const [file, rowsText = "25"] = process.argv.slice(2);
if (!file) throw new Error("usage: profile-top.ts <file.cpuprofile> [rows]");
const profile = JSON.parse(readFileSync(file, "utf8")) as Profile;
const rows = Number(rowsText);

const hits = new Map<number, number>();
for (const sample of profile.samples) hits.set(sample, (hits.get(sample) ?? 0) + 1);
const total = profile.samples.length;

/** Where a frame comes from: a package in node_modules, a project file, node's own code, or V8. */
function origin(url: string): string {
  if (url === "") return "(native/V8)";
  const inModules = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (inModules) return inModules[1]!;
  if (url.startsWith("node:")) return url;
  return url.replace(/^file:\/\/.*?\/(src|adapters|bench)\//, "$1/");
}

function nameOf(node: ProfileNode): string {
  const { functionName, url, lineNumber } = node.callFrame;
  return `${functionName || "(anonymous)"}  ${origin(url)}${url ? `:${lineNumber + 1}` : ""}`;
}

const byFunction = new Map<string, number>();
const byOrigin = new Map<string, number>();
/** Self time of a function and of everything it called (each sample once per function). */
const withCallees = new Map<string, number>();
const nodesById = new Map(profile.nodes.map((node) => [node.id, node]));
const walk = (node: ProfileNode, path: Set<string>) => {
  const name = nameOf(node);
  const self = hits.get(node.id) ?? 0;
  const added = !path.has(name);
  if (added) path.add(name);
  if (self > 0) {
    byFunction.set(name, (byFunction.get(name) ?? 0) + self);
    const where = origin(node.callFrame.url);
    byOrigin.set(where, (byOrigin.get(where) ?? 0) + self);
    for (const onPath of path) withCallees.set(onPath, (withCallees.get(onPath) ?? 0) + self);
  }
  for (const child of node.children ?? []) walk(nodesById.get(child)!, path);
  if (added) path.delete(name);
};
walk(profile.nodes[0]!, new Set());

const show = (title: string, counts: Map<string, number>) => {
  console.log(`${title} (${total} samples)`);
  for (const [name, count] of [...counts].sort((a, b) => b[1] - a[1]).slice(0, rows)) {
    console.log(`${((100 * count) / total).toFixed(1).padStart(5)}%  ${name}`);
  }
  console.log("");
};
show("functions", byFunction);
show("origins", byOrigin);
show("functions with what they call", withCallees);

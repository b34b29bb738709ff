/**
 * The layout rules of the style guide, checked on the import graph of src/, adapters/ and
 * cli/ as esbuild resolves it: no import cycle anywhere, and each layer imports only what it
 * may. Imports of types count too: a cycle through types is still one a reader must untangle.
 */
import { readdirSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { build, type Plugin } from "esbuild";
import { test } from "uvu";
import * as assert from "uvu/assert";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const DIRECTORIES = ["src", "adapters", "cli"];

/** Each file (a path from the repository's root) and what it imports: files, or bare specifiers. */
type ImportGraph = Map<string, { files: string[]; packages: string[] }>;

// esbuild drops `import type` and `export type ... from` (it erases types); read as plain
// imports, they stay in the graph. Only statements at the start of a line are real ones.
const typeImportsToo: Plugin = {
  name: "type-imports-too",
  setup(build) {
    build.onLoad({ filter: /\.ts$/ }, (args) => ({
      loader: "ts",
      contents: readFileSync(args.path, "utf8").replace(/^(import|export) type (?=[{*]|\w+ from)/gm, "$1 "),
    }));
  },
};

/** What esbuild is asked for here: the files a bundle of the entry points reads, written nowhere. */
const METAFILE_ONLY = { absWorkingDir: ROOT, bundle: true, write: false, outdir: "out", metafile: true, format: "esm", platform: "neutral", logLevel: "silent" } as const;

async function importGraph(): Promise<ImportGraph> {
  const entryPoints = DIRECTORIES.flatMap((directory) =>
    readdirSync(`${ROOT}${directory}`, { recursive: true, encoding: "utf8" })
      .filter((file) => file.endsWith(".ts") && !file.endsWith(".d.ts"))
      .map((file) => `${directory}/${file}`),
  );
  const { metafile } = await build({
    ...METAFILE_ONLY,
    entryPoints,
    packages: "external",
    // With it, esbuild keeps an import whose names are all types (`import { type A }`).
    tsconfigRaw: { compilerOptions: { verbatimModuleSyntax: true } },
    plugins: [typeImportsToo],
  });
  const graph: ImportGraph = new Map();
  for (const [file, input] of Object.entries(metafile.inputs)) {
    const files = input.imports.filter((i) => !i.external).map((i) => i.path);
    const packages = input.imports.filter((i) => i.external).map((i) => i.path);
    graph.set(file, { files: [...new Set(files)], packages: [...new Set(packages)] });
  }
  return graph;
}

/** Every cycle a depth-first walk meets, each as the files around it, the first one repeated at the end. */
function findCycles(imports: Map<string, readonly string[]>): string[][] {
  const cycles: string[][] = [];
  const done = new Set<string>();
  const path: string[] = [];
  const visit = (file: string) => {
    const onPath = path.indexOf(file);
    if (onPath !== -1) {
      cycles.push([...path.slice(onPath), file]);
      return;
    }
    if (done.has(file)) return;
    path.push(file);
    for (const next of imports.get(file) ?? []) visit(next);
    path.pop();
    done.add(file);
  };
  for (const file of [...imports.keys()].sort()) visit(file);
  return cycles;
}

const graph = await importGraph();
const filesOf = new Map([...graph].map(([file, { files }]) => [file, files]));

/** `importer imports imported` for every import that breaks `rule`. */
function breaches(rule: (importer: string, imported: string) => boolean): string[] {
  return [...graph].flatMap(([importer, { files, packages }]) =>
    [...files, ...packages].filter((imported) => rule(importer, imported)).map((imported) => `${importer} imports ${imported}`),
  );
}

test("the graph is the repository's: every file of src/, adapters/ and cli/ is in it", () => {
  for (const file of ["src/handler.ts", "src/routes/create/pipeline.ts", "src/stores/memory/store.ts", "adapters/node.ts", "cli/bin.ts"]) {
    assert.ok(graph.has(file), `${file} is missing from the import graph`);
  }
  assert.ok(filesOf.get("src/handler.ts")!.includes("src/routes/create/pipeline.ts"), "an import esbuild resolved");
  assert.ok(filesOf.get("src/handler.ts")!.includes("src/routes/route.ts"), "an import of types only");
  assert.ok(graph.get("adapters/node.ts")!.packages.includes("node:http"), "a built-in module");
});

test("the cycle finder names each cycle it meets, and none in a graph without one", () => {
  const cyclic = new Map([["a", ["b"]], ["b", ["c"]], ["c", ["a", "d"]], ["d", []], ["e", ["e"]]]);
  assert.equal(findCycles(cyclic), [["a", "b", "c", "a"], ["e", "e"]]);
  assert.equal(findCycles(new Map([["a", ["b", "c"]], ["b", ["c"]], ["c", []]])), []);
});

test("no import cycle in src/, adapters/ or cli/", () => {
  const cycles = findCycles(filesOf).map((cycle) => cycle.join(" -> "));
  assert.equal(cycles, [], `import cycles:\n${cycles.join("\n")}`);
});

test("the core (src/) imports no Node, Bun or Deno module, no adapter and nothing of the CLI", () => {
  const runtimeSpecific = (specifier: string) => /^(node|bun|deno|npm|jsr):/.test(specifier) || specifier === "bun";
  assert.equal(
    breaches((importer, imported) =>
      importer.startsWith("src/") && (runtimeSpecific(imported) || imported.startsWith("adapters/") || imported.startsWith("cli/"))),
    [],
  );
});

test("only stores import stores: the core outside src/stores/ never imports one", () => {
  assert.equal(breaches((importer, imported) => importer.startsWith("src/") && !importer.startsWith("src/stores/") && imported.startsWith("src/stores/")), []);
});

test("the adapters import nothing of the CLI: the CLI runs on them, not they on it", () => {
  assert.equal(breaches((importer, imported) => importer.startsWith("adapters/") && imported.startsWith("cli/")), []);
});

test("the client (formsink/client) reaches no other module at run time: it ships none of the server's code", async () => {
  // Types erased, as a bundler erases them, and packages bundled: the client takes only types from the rest of src/.
  const { metafile } = await build({ ...METAFILE_ONLY, entryPoints: ["src/client/index.ts"] });
  assert.equal(Object.keys(metafile.inputs).filter((file) => !file.startsWith("src/client/")), []);
});

test("stores never import the routes or the router", () => {
  assert.equal(
    breaches((importer, imported) => importer.startsWith("src/stores/") && (imported.startsWith("src/routes/") || imported === "itty-router")),
    [],
  );
});

test.run();

/**
 * What `formsink serve` loads before its first answer: the modules its static imports reach.
 * arktype is most of a start's time and memory (bench/README.md, cold start and idle RSS), so
 * neither it nor the schemas are among them: the routes that validate with them, the OpenAPI
 * document and the other commands are imported when first used.
 */
import { fileURLToPath } from "node:url";
import { build } from "esbuild";
import { test } from "uvu";
import * as assert from "uvu/assert";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));

/** Every file and package `entry` reaches through static imports (types erased, as at run time). */
async function staticallyReached(entry: string): Promise<Set<string>> {
  const { metafile } = await build({
    absWorkingDir: ROOT,
    entryPoints: [entry],
    bundle: true,
    write: false,
    outdir: "out",
    metafile: true,
    format: "esm",
    platform: "node",
    packages: "external",
    logLevel: "silent",
  });
  const reached = new Set([entry]);
  const queue = [entry];
  for (let file = queue.shift(); file !== undefined; file = queue.shift()) {
    for (const { path, kind } of metafile.inputs[file]?.imports ?? []) {
      if (kind !== "import-statement" || reached.has(path)) continue;
      reached.add(path);
      queue.push(path);
    }
  }
  return reached;
}

const ARKTYPE_AND_SCHEMAS = ["arktype", "src/schemas.ts", "src/validate.ts", "src/code-points.ts", "src/openapi.ts"];

test("formsink serve starts without loading arktype or the schemas", async () => {
  const reached = await staticallyReached("cli/bin.ts");
  const serve = await staticallyReached("cli/commands/serve.ts");
  assert.ok(serve.has("src/handler.ts") && serve.has("src/routes/submissions.ts") && serve.has("libsql"), "the walk follows serve's imports");
  assert.equal(ARKTYPE_AND_SCHEMAS.filter((name) => reached.has(name) || serve.has(name)), []);
});

test("the walk finds arktype where a module imports it", async () => {
  const reached = await staticallyReached("src/routes/events.ts");
  assert.ok(reached.has("arktype") && reached.has("src/schemas.ts"));
});

test.run();

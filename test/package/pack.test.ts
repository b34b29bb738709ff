/**
 * The npm package as a user gets it: `npm pack`, installed into a throwaway project with no
 * dev tools, every entry point imported from JavaScript (plain Node), from TypeScript (type-
 * checked and run), and from Deno; the `formsink` bin run without tsx.
 */
import { execFile, execFileSync, spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { promisify } from "node:util";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { startHranaServer } from "../support/hrana-server.ts";
import { collect, waitForOutput } from "../support/process.ts";

const ROOT = resolve(import.meta.dirname, "../..");
const BIN = join(ROOT, "node_modules/.bin");
const ENTRY_POINTS = ["formsink", "formsink/memory", "formsink/libsql", "formsink/d1", "formsink/postgres", "formsink/node", "formsink/bun", "formsink/deno", "formsink/workers", "formsink/testing"];

const pkg = suite<{ project: string; files: string[] }>("npm package");

function run(command: string, args: string[], cwd: string): string {
  try {
    return execFileSync(command, args, { cwd, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
  } catch (error) {
    // tsc reports its errors on stdout: the failure should show them
    const { stdout, stderr } = error as { stdout?: string; stderr?: string };
    throw new Error(`${(error as Error).message}\n${stdout ?? ""}${stderr ?? ""}`);
  }
}

pkg.before(async (context) => {
  context.project = mkdtempSync(join(tmpdir(), "formsink-consumer-"));
  const [packed] = JSON.parse(run("npm", ["pack", "--json", "--pack-destination", context.project], ROOT)) as { filename: string; files: { path: string }[] }[];
  context.files = packed!.files.map((file) => file.path);
  writeFileSync(
    join(context.project, "package.json"),
    JSON.stringify({ name: "consumer", private: true, type: "module", dependencies: { formsink: `file:./${packed!.filename}` } }),
  );
  run("npm", ["install", "--no-audit", "--no-fund", "--prefer-offline", "--loglevel=error"], context.project);
});
pkg.after(({ project }) => rmSync(project, { recursive: true, force: true }));

pkg("the tarball holds the built package and nothing else: no sources, tests, fixtures or databases", ({ files }) => {
  assert.ok(files.includes("dist/src/index.js") && files.includes("dist/src/index.d.ts") && files.includes("dist/cli/bin.js") && files.includes("bin/formsink.js"));
  const unexpected = files.filter((file) => !/^(dist\/.+\.(js|d\.ts)|dist\/cli\/arktype\.cjs|bin\/formsink\.js|package\.json|README\.md|LICENSE)$/.test(file));
  assert.equal(unexpected, []);
});

pkg("installing runs no script: the packed package.json has no install-time lifecycle script (the build runs at prepack)", ({ project, files }) => {
  const installed = JSON.parse(readFileSync(join(project, "node_modules/formsink/package.json"), "utf8")) as { scripts?: Record<string, string> };
  const scripts = Object.keys(installed.scripts ?? {});
  assert.equal(scripts.filter((name) => ["preinstall", "install", "postinstall", "prepare"].includes(name)), []);
  assert.ok(scripts.includes("prepack"), "the build runs when the tarball is made");
  assert.not.ok(files.includes("binding.gyp"), "a binding.gyp would make npm run node-gyp");
});

pkg("the popup script the README embeds is in the package, as it is in examples/, and resolvable by name", ({ project, files }) => {
  assert.ok(files.includes("dist/popup/formsink-popup.js"));
  const installed = readFileSync(join(project, "node_modules/formsink/dist/popup/formsink-popup.js"), "utf8");
  assert.is(installed, readFileSync(join(ROOT, "examples/popup/formsink-popup.js"), "utf8"));
  const resolved = run("node", ["--input-type=module", "-e", 'console.log(import.meta.resolve("formsink/popup/formsink-popup.js"))'], project).trim();
  assert.is(resolved, `file://${join(project, "node_modules/formsink/dist/popup/formsink-popup.js")}`);
});

pkg("every entry point imports in plain Node, and the handler answers", ({ project }) => {
  writeFileSync(
    join(project, "use.mjs"),
    `${ENTRY_POINTS.map((entry, i) => `import * as m${i} from "${entry}";`).join("\n")}
const modules = [${ENTRY_POINTS.map((_, i) => `m${i}`).join(", ")}];
if (modules.some((m) => Object.keys(m).length === 0)) throw new Error("an entry point exports nothing");
const store = m1.createMemoryStore();
const { key } = await m0.createApiKey(store, { account: "js" });
const response = await m0.createSubmissionsHandler(store)(new Request("http://x/api/submission", { headers: { "x-api-key": key } }));
console.log(response.status, JSON.stringify(await response.json()));`,
  );
  assert.is(run("node", ["use.mjs"], project).trim(), '200 {"items":[],"limit":10,"offset":0,"total":0,"nextCursor":null}');
});

pkg("the types of every entry point resolve (strict TypeScript), and the TypeScript runs", ({ project }) => {
  writeFileSync(
    join(project, "use.ts"),
    `import { createSubmissionsHandler, createApiKey, type CompleteStore, type ConnectionInfo, type Submission } from "formsink";
import { createMemoryStore } from "formsink/memory";
import { createLibsqlStore } from "formsink/libsql";
import { createD1Store } from "formsink/d1";
import { createPostgresStore } from "formsink/postgres";
import { serve, createRequestListener } from "formsink/node";
import { createWorker } from "formsink/workers";
import type { BunServer } from "formsink/bun";
import type { DenoServer } from "formsink/deno";

const store: CompleteStore = createMemoryStore();
const handler: (request: Request, connection?: ConnectionInfo) => Promise<Response> = createSubmissionsHandler(store, { basePath: "/forms" });
export function neverCalled(): void {
  // @ts-expect-error basePath is a string: fails to compile if the types resolved to any
  createSubmissionsHandler(store, { basePath: 5 });
}
const unused = [createLibsqlStore, createD1Store, createPostgresStore, serve, createRequestListener, createWorker] as const;
type Servers = BunServer["url"] | DenoServer["url"];
const { key } = await createApiKey(store, { account: "ts" });
// what host frameworks give (Hono's getConnInfo(c).remote.address), under exactOptionalPropertyTypes
const peer: string | undefined = process.env.FORMSINK_UNSET_PEER;
const response = await handler(new Request("http://x/forms/api/submission", { headers: { "x-api-key": key } }), { clientAddress: peer });
const page = (await response.json()) as { items: Submission[]; total: number };
const url: Servers = "http://x";
console.log(response.status, page.total, unused.length, url);`,
  );
  writeFileSync(
    join(project, "tsconfig.json"),
    JSON.stringify({
      compilerOptions: {
        target: "es2023", module: "nodenext", moduleResolution: "nodenext", strict: true, exactOptionalPropertyTypes: true, noEmit: true,
        skipLibCheck: true, types: ["node"], typeRoots: [join(ROOT, "node_modules/@types")],
      },
      files: ["use.ts"],
    }),
  );
  run(join(BIN, "tsc"), ["-p", "tsconfig.json"], project);
  assert.is(run(process.execPath, ["--import", join(ROOT, "node_modules/tsx/dist/esm/index.mjs"), "use.ts"], project).trim(), "200 0 6 http://x");
});

pkg("Deno imports the npm package and type-checks it", ({ project }) => {
  writeFileSync(
    join(project, "deno-use.ts"),
    `import { createSubmissionsHandler } from "formsink";
import { serve } from "formsink/deno";
import { createMemoryStore } from "formsink/memory";
const server = await serve(createSubmissionsHandler(createMemoryStore()), { port: 0 });
const response = await fetch(\`\${server.url}/api/submission\`);
console.log(response.status, (await response.json()).message);
await server.close();`,
  );
  run(join(BIN, "deno"), ["check", "--quiet", "deno-use.ts"], project);
  const output = run(join(BIN, "deno"), ["run", "--allow-net=127.0.0.1", "--allow-env", "--allow-read", "deno-use.ts"], project);
  assert.is(output.trim(), "401 API key is required");
});

pkg("sandboxed Deno (docs/runtimes.md): with --allow-net alone and the worker condition, a remote libSQL database serves", async ({ project }) => {
  writeFileSync(
    join(project, "deno-remote.ts"),
    `import { createClient } from "@libsql/client/web";
import { createSubmissionsHandler } from "formsink";
import { serve } from "formsink/deno";
import { createLibsqlStore } from "formsink/libsql";
const store = await createLibsqlStore({ client: createClient({ url: Deno.args[0]!, authToken: "token" }) });
const server = await serve(createSubmissionsHandler(store), { port: 0 });
const response = await fetch(\`\${server.url}/api/health\`);
console.log(response.status, JSON.stringify(await response.json()));
await server.close();
await store.close();`,
  );
  const remote = await startHranaServer("token");
  try {
    // Not execFileSync: the remote database answers from this process.
    const { stdout } = await promisify(execFile)(join(BIN, "deno"), ["run", "--allow-net=127.0.0.1", "--conditions", "worker", "deno-remote.ts", remote.url], { cwd: project });
    assert.is(stdout.trim(), '200 {"status":"ok"}');
    assert.ok(remote.requests() > 0, "the store is the remote one");
  } finally {
    await remote.close();
  }
});

pkg("the formsink bin and serve's webhook thread are one file each that loads only Node's modules and libsql (and its promise API) as it starts, arktype a file beside them", ({ project, files }) => {
  assert.equal(files.filter((file) => file.startsWith("dist/cli/")).sort(), ["dist/cli/arktype.cjs", "dist/cli/bin.js", "dist/cli/webhook-worker.js"]);
  const loads = (file: string) => {
    const source = readFileSync(join(project, "node_modules/formsink/dist/cli", file), "utf8");
    const imported = [...source.matchAll(/^import\b[^"';]*["']([^"']+)["']/gm)].map((match) => match[1]!);
    // libsql and arktype are CommonJS, required rather than imported (scripts/after-build.mjs says why).
    const required = [...source.matchAll(/(?:createRequire\d*\(import\.meta\.url\)|\brequire)\(["']([^"']+)["']\)/g)].map((match) => match[1]!);
    return { imported, required };
  };
  for (const file of ["bin.js", "webhook-worker.js"]) {
    const { imported, required } = loads(file);
    assert.ok(required.includes("libsql"), `${file}: libsql stays outside the bundle (native code)`);
    const besides = ["libsql", "libsql/promise", "./arktype.cjs"];
    assert.equal([...imported, ...required].filter((specifier) => !specifier.startsWith("node:") && !besides.includes(specifier)), [], file);
  }
  assert.ok(loads("bin.js").required.includes("./arktype.cjs"), "the bin takes arktype from the file beside it");
  assert.equal(loads("arktype.cjs").required.filter((specifier) => !specifier.startsWith("node:")), [], "arktype.cjs holds all of arktype");
});

pkg("the formsink bin runs from the install, without tsx", ({ project }) => {
  const db = `file:${join(project, "forms.db")}`;
  assert.match(run(join(project, "node_modules/.bin/formsink"), ["keys", "create", "--account", "bin", "--db", db], project), /^fs_sk_\w+/);
  assert.match(run(join(project, "node_modules/.bin/formsink"), ["keys", "list", "--db", db], project), /bin/);
  assert.throws(() => run("node", ["-e", "import('tsx')"], project));
});

pkg("the installed command serves under Bun and Deno with their own servers, same flags", async ({ project }) => {
  const db = `file:${join(project, "runtimes.db")}`;
  const key = run(join(project, "node_modules/.bin/formsink"), ["keys", "create", "--account", "runtimes", "--db", db], project).trim();
  const serveArgs = ["serve", "--port", "0", "--db", db];
  const commands: [runtime: string, command: string[]][] = [
    ["bun", [join(BIN, "bun"), "--bun", "node_modules/.bin/formsink", ...serveArgs]],
    ["deno", [join(BIN, "deno"), "run", "--allow-net", "--allow-env", "--allow-sys", "--allow-ffi", "--allow-read", "--allow-write", "npm:formsink", ...serveArgs]],
  ];
  for (const [runtime, [command, ...args]] of commands) {
    const child = spawn(command!, args, { cwd: project });
    const exited = collect(child);
    try {
      const url = (await waitForOutput(child, "stdout", new RegExp(`serving (http://\\S+) \\(database .*, ${runtime}\\)`)))[1]!;
      const response = await fetch(`${url}/api/submission`, { headers: { "x-api-key": key } });
      assert.is(response.status, 200, runtime);
    } finally {
      child.kill("SIGTERM");
    }
    assert.is((await exited).code, 0, runtime);
  }
});

pkg.run();

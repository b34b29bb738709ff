/**
 * The README and docs/ stay true: every ```ts block compiles against the built package, the
 * README's quick start runs against the built CLI and answers what the README shows, every query
 * parameter a route reads is named in the docs' section on it, and every relative link leads to a
 * file and heading that exist. Needs dist/ (`npm run build`, which
 * `npm test` runs first) and curl.
 */
import { type ChildProcess, execFile, spawn } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join, relative, resolve } from "node:path";
import { promisify } from "node:util";
import { suite } from "uvu";
import * as assert from "uvu/assert";

const ROOT = resolve(import.meta.dirname, "../..");
const BIN = join(ROOT, "dist/cli/bin.js");
const README = join(ROOT, "README.md");
/** The pages checked: the README, every page of docs/, and the benchmarks' README they link to. */
const PAGES = [README, ...readdirSync(join(ROOT, "docs")).filter((name) => name.endsWith(".md")).map((name) => join(ROOT, "docs", name)), join(ROOT, "bench/README.md")];
const run = promisify(execFile);

interface Block {
  file: string;
  /** 1-based line of the opening fence. */
  line: number;
  lang: string;
  /** What follows the language on the fence line: `bun`, `deno` or `workers` for ts blocks. */
  tag: string;
  code: string;
}

/** The fenced code blocks of a Markdown text, in order. */
function codeBlocks(file: string): Block[] {
  const blocks: Block[] = [];
  const lines = readFileSync(file, "utf8").split("\n");
  for (let i = 0; i < lines.length; i++) {
    const open = /^(\s*)```(\S*)\s*(.*)$/.exec(lines[i]!);
    if (!open) continue;
    const indent = open[1]!.length;
    const body: string[] = [];
    let j = i + 1;
    for (; j < lines.length && !/^\s*```\s*$/.test(lines[j]!); j++) body.push(lines[j]!.slice(indent));
    assert.ok(j < lines.length, `${relative(ROOT, file)}:${i + 1}: a code block that never closes`);
    blocks.push({ file, line: i + 1, lang: open[2]!, tag: open[3]!.trim(), code: body.join("\n") });
    i = j;
  }
  return blocks;
}

// ---- ts blocks compile ----------------------------------------------------------------------

const typecheck = suite("docs: every ts block compiles against the package");

/** Each runtime's blocks are checked against that runtime's types, as the code's own typecheck does. */
const RUNTIME_TYPES: Record<string, object> = {
  node: { types: ["node"] },
  bun: { types: ["bun-types"] },
  workers: { types: ["@cloudflare/workers-types"] },
  // Deno's own checker does not resolve the package by its name here; web types stand in.
  deno: { types: [], lib: ["es2024", "dom", "dom.iterable"] },
};

typecheck("ts blocks of README.md and docs/*.md type-check, each as a module importing formsink", async () => {
  const blocks = PAGES.flatMap(codeBlocks).filter((block) => block.lang === "ts");
  assert.ok(blocks.length >= 10, `only ${blocks.length} ts blocks found`);
  // Inside the repository, so that `formsink/...` resolves to this package (dist/) by its name.
  const dir = join(ROOT, ".docs-check");
  rmSync(dir, { recursive: true, force: true });
  try {
    const byRuntime = new Map<string, string[]>();
    for (const block of blocks) {
      const runtime = block.tag || "node";
      assert.ok(runtime in RUNTIME_TYPES, `${relative(ROOT, block.file)}:${block.line}: unknown tag "${runtime}"`);
      mkdirSync(join(dir, runtime), { recursive: true });
      const name = `${relative(ROOT, block.file).replaceAll("/", "_")}_line${block.line}.ts`;
      writeFileSync(join(dir, runtime, name), `${block.code}\nexport {};\n`);
      byRuntime.set(runtime, [...(byRuntime.get(runtime) ?? []), `${runtime}/${name}`]);
    }
    const failures = await Promise.all(
      [...byRuntime].map(async ([runtime, files]) => {
        const config = join(dir, `tsconfig.${runtime}.json`);
        writeFileSync(config, JSON.stringify({ extends: "../tsconfig.json", compilerOptions: RUNTIME_TYPES[runtime], files, include: [] }));
        try {
          await run(join(ROOT, "node_modules/.bin/tsc"), ["-p", config, "--pretty", "false"], { cwd: ROOT });
          return "";
        } catch (error) {
          const { stdout = "", stderr = "" } = error as { stdout?: string; stderr?: string };
          return `${runtime}:\n${stdout}${stderr}`;
        }
      }),
    );
    assert.is(failures.join(""), "", "a ts block does not compile (its file is named after the page and line of the block)");
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

typecheck.run();

// ---- the README's quick start runs ----------------------------------------------------------

const quickStart = suite("docs: the README's quick start answers what it shows");

/** The README's section of that name, as blocks. */
function section(title: string): Block[] {
  const text = readFileSync(README, "utf8");
  const start = text.indexOf(`\n## ${title}\n`);
  assert.ok(start !== -1, `README.md has no "## ${title}" section`);
  const startLine = text.slice(0, start).split("\n").length + 1;
  const endLine = startLine + text.slice(start + 1).split("\n").findIndex((line, i) => i > 0 && line.startsWith("## "));
  return codeBlocks(README).filter((block) => block.line > startLine && block.line < endLine);
}

const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g;
const INSTANT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

/** What differs from run to run (ids, times) as placeholders, so that answers compare by shape and value. */
function normalized(value: unknown): unknown {
  if (typeof value === "string") return INSTANT.test(value) ? "<instant>" : value.replace(UUID, "<uuid>");
  if (Array.isArray(value)) return value.map(normalized);
  if (value !== null && typeof value === "object") return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, normalized(v)]));
  return value;
}

/**
 * A bash session whose commands run one block at a time, so that variables (KEY, ID) carry over.
 * It leads a process group of its own, which `close` ends whole: a block still running (a wait
 * loop whose server never came up) and what it started in the background go with it, so that a
 * failed test leaves nothing running that would keep the test process alive.
 */
function shell(env: NodeJS.ProcessEnv, cwd = ROOT): { run(script: string, timeoutMs?: number): Promise<string>; close(): void; child: ChildProcess } {
  const child = spawn("bash", ["--norc", "--noprofile"], { cwd, env, stdio: ["pipe", "pipe", "pipe"], detached: true });
  let out = "";
  let err = "";
  child.stdout.on("data", (chunk) => (out += chunk));
  child.stderr.on("data", (chunk) => (err += chunk));
  let blocks = 0;
  return {
    child,
    run(script, timeoutMs = 20_000) {
      const marker = `@@block-done-${++blocks}`;
      out = "";
      child.stdin.write(`${script}\nprintf '\\n${marker}\\n'\n`);
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`the block did not finish within ${timeoutMs / 1000} s; stderr: ${err}`)), timeoutMs);
        const check = () => {
          const at = out.indexOf(`${marker}\n`);
          if (at === -1) return;
          clearTimeout(timer);
          child.stdout.off("data", check);
          resolve(out.slice(0, at));
        };
        child.stdout.on("data", check);
        child.once("close", () => reject(new Error(`bash exited; stderr: ${err}`)));
      });
    },
    close() {
      child.stdin.end();
      try {
        process.kill(-child.pid!, "SIGKILL");
      } catch {
        // The group has ended already.
      }
    },
  };
}

interface BlockRun {
  /** The block's script for this run: ids and ports of earlier answers put in. */
  rewrite(script: string): string;
  /** Asserts that an answer line matches the line the README shows after the block. */
  compare(answer: string, shown: string, where: string, lang: string): void;
  timeoutMs?: number;
  /** More to say when the number of lines differs (what the server logged). */
  context?: () => string;
}

/**
 * Runs each ```sh block of `blocks` in the session, in order: every curl must be announced by a
 * comment ending in its status, and what the block prints must be the ```json or ```text block
 * that follows it (or nothing). Returns how many lines were compared.
 */
async function runBlocks(session: ReturnType<typeof shell>, base: string, blocks: Block[], how: BlockRun): Promise<number> {
  let checked = 0;
  for (const [index, block] of blocks.entries()) {
    if (block.lang !== "sh") continue;
    const where = `README.md:${block.line}`;
    const expectedStatuses = [...block.code.matchAll(/^\s*#.*\((\d{3})\)/gm)].map((match) => Number(match[1]));
    const curls = block.code.match(/^\s*curl /gm)?.length ?? 0;
    assert.is(expectedStatuses.length, curls, `${where}: each curl needs a comment before it that ends with its status, e.g. "# create (201)"`);
    const script = how
      .rewrite(block.code)
      .replaceAll("http://127.0.0.1:8787", base)
      .replaceAll("npx formsink", `node ${JSON.stringify(BIN)}`)
      .replace(/^(\s*)curl /gm, `$1curl -w '\\n@@status %{http_code}\\n' `);
    const output = await session.run(script, how.timeoutMs);
    const statuses = [...output.matchAll(/^@@status (\d+)$/gm)].map((match) => Number(match[1]));
    assert.equal(statuses, expectedStatuses, `${where}: statuses`);
    const answers = output.split("\n").filter((line) => line.trim() !== "" && !line.startsWith("@@status"));
    const next = blocks[index + 1];
    if (next?.lang !== "json" && next?.lang !== "text") {
      assert.equal(answers, [], `${where}: prints what the README does not show`);
      continue;
    }
    const shown = next.code.split("\n").filter((line) => line.trim() !== "");
    assert.is(answers.length, shown.length, `${where}: ${answers.length} lines, the README shows ${shown.length}:\n${answers.join("\n")}\n${how.context?.() ?? ""}`);
    answers.forEach((answer, i) => how.compare(answer, shown[i]!, `${where}: line ${i + 1}`, next.lang));
    checked += answers.length;
  }
  return checked;
}

/** The address the server prints once it listens. */
function serverAddress(server: ChildProcess, said: () => string): Promise<string> {
  return new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the server printed no address within 10 s: ${said()}`)), 10_000);
    const look = () => {
      const url = /http:\/\/127\.0\.0\.1:[1-9]\d*/.exec(said())?.[0];
      if (url) {
        clearTimeout(timer);
        resolve(url);
      }
    };
    server.stdout!.on("data", look);
    server.stderr!.on("data", look);
    server.once("close", () => reject(new Error(`the server exited: ${said()}`)));
  });
}

quickStart("npm start, a key, then each curl of the README gets the status and answer shown", async () => {
  assert.ok(existsSync(BIN), `${BIN} is missing: run npm run build first`);
  await run("curl", ["--version"]).catch(() => assert.unreachable("curl is needed to run the README's commands: apt-get install curl"));
  const blocks = section("Quick start");
  const start = blocks.find((block) => block.lang === "sh" && /^npm start$/m.test(block.code));
  assert.ok(start, "the quick start has no ```sh block that runs npm start");
  const startScript = (JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { scripts: Record<string, string> }).scripts.start;
  assert.match(startScript ?? "", /\bserve\b/, "npm start does not run formsink serve");
  const banner = blocks.find((block) => block.lang === "text" && block.code.includes("formsink keys create"));
  assert.ok(banner, "the quick start does not show how the server says to make the first key");

  const dir = mkdtempSync(join(tmpdir(), "formsink-readme-"));
  const env = { ...process.env, FORMSINK_DB: `file:${join(dir, "formsink.db")}`, PORT: "0", HOST: "127.0.0.1" };
  const server = spawn(process.execPath, [BIN, "serve"], { cwd: dir, env, stdio: ["ignore", "pipe", "pipe"] });
  let said = "";
  server.stdout.on("data", (chunk) => (said += chunk));
  server.stderr.on("data", (chunk) => (said += chunk));
  const session = shell(env);
  try {
    const base = await serverAddress(server, () => said);
    const hint = /formsink keys create --account \S+/.exec(banner.code)![0];
    for (let waited = 0; !said.includes(hint) && waited < 5000; waited += 50) await new Promise((resolve) => setTimeout(resolve, 50));
    assert.ok(said.includes(hint), `the server does not say "${hint}"; it said: ${said}`);
    // The schema line names the version this build creates: it changes with every migration.
    for (const line of banner.code.split("\n").filter((text) => text.startsWith("database schema"))) {
      assert.ok(said.includes(line), `the server does not say "${line}"; it said: ${said}`);
    }

    let lastId: string | undefined;
    const checked = await runBlocks(session, base, blocks.slice(blocks.indexOf(start) + 1), {
      rewrite: (script) => (lastId === undefined ? script : script.replace(UUID, lastId)),
      compare(answer, shown, where) {
        const value = JSON.parse(answer) as { submissionId?: string };
        assert.equal(normalized(value), normalized(JSON.parse(shown)), where);
        if (typeof value.submissionId === "string") lastId = value.submissionId;
      },
    });
    assert.ok(checked >= 5, `only ${checked} answers checked`);
  } finally {
    session.close();
    server.kill("SIGTERM");
    await new Promise((resolve) => (server.exitCode !== null ? resolve(undefined) : server.once("close", resolve)));
    rmSync(dir, { recursive: true, force: true });
  }
});

quickStart.run();

// ---- the README's webhook walk-through runs ---------------------------------------------------

const walkThrough = suite("docs: the README's webhook walk-through delivers, fails, and recovers as shown");

const EVENT_ID = /evt_[0-9a-f]{32}/g;
const WEBHOOK_ID = /wh_[0-9a-f]{32}/g;

/**
 * A delivery log or receiver line compared by what the walk-through shows: ids as placeholders,
 * and the figures that depend on timing (an attempt's duration, how many attempts a waiting
 * delivery has had so far) by their kind.
 */
function walkThroughShape(value: unknown, key = ""): unknown {
  if (key === "lastDurationMs" && typeof value === "number") return "<duration>";
  if (key === "attempts" && typeof value === "number" && value > 0) return "<one or more>";
  if (typeof value === "string") return normalized(value.replace(EVENT_ID, "<event id>").replace(WEBHOOK_ID, "<webhook id>"));
  if (Array.isArray(value)) return value.map((item) => walkThroughShape(item));
  if (value !== null && typeof value === "object") return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, walkThroughShape(v, k)]));
  return value;
}

/**
 * A free TCP port on 127.0.0.1 for the receiver (the README's 9000 may be taken here), below
 * Linux's ephemeral range (32768 and up): a port the kernel handed out for listen(0) and then
 * freed can be handed out again, to the server this test starts or to a client's connection,
 * before the receiver listens on it.
 */
async function freePort(): Promise<number> {
  for (let tries = 0; ; tries++) {
    const port = 20_000 + Math.floor(Math.random() * 12_000);
    const server = createServer();
    const listening = await new Promise<boolean>((resolve) => {
      server.once("error", () => resolve(false));
      server.listen(port, "127.0.0.1", () => resolve(true));
    });
    if (listening) {
      await new Promise((resolve) => server.close(resolve));
      return port;
    }
    assert.ok(tries < 50, "no free port between 20000 and 32000 on 127.0.0.1");
  }
}

walkThrough("the README's Webhooks section: a signed delivery verified by standardwebhooks, a failure in the log, the retry after the receiver is back", async () => {
  assert.ok(existsSync(BIN), `${BIN} is missing: run npm run build first`);
  await run("curl", ["--version"]).catch(() => assert.unreachable("curl is needed to run the README's commands: apt-get install curl"));
  const blocks = section("Webhooks");
  const startIndex = blocks.findIndex((block) => block.lang === "sh" && /^FORMSINK_ALLOW_PRIVATE_WEBHOOKS=1 npm start$/m.test(block.code));
  assert.ok(startIndex !== -1, "the section has no ```sh block that restarts the server allowing private webhooks");
  const receiverBlock = blocks.find((block) => block.lang === "js" && block.code.includes("standardwebhooks"));
  assert.ok(receiverBlock, "the section shows no receiver using standardwebhooks");

  // The session runs where the reader would: beside receiver.mjs, with the clone's packages.
  const dir = mkdtempSync(join(tmpdir(), "formsink-readme-webhooks-"));
  symlinkSync(join(ROOT, "node_modules"), join(dir, "node_modules"));
  const port = String(await freePort());
  writeFileSync(join(dir, "receiver.mjs"), receiverBlock.code.replaceAll("9000", port));
  const env = { ...process.env, FORMSINK_DB: `file:${join(dir, "formsink.db")}`, PORT: "0", HOST: "127.0.0.1", FORMSINK_ALLOW_PRIVATE_WEBHOOKS: "1" };
  const server = spawn(process.execPath, [BIN, "serve"], { cwd: dir, env, stdio: ["ignore", "pipe", "pipe"] });
  let said = "";
  server.stdout.on("data", (chunk) => (said += chunk));
  server.stderr.on("data", (chunk) => (said += chunk));
  const session = shell(env, dir);
  try {
    const base = await serverAddress(server, () => said);
    assert.is((await session.run(`KEY=$(node ${JSON.stringify(BIN)} keys create --account my-site 2>/dev/null)`)).trim(), "", "the quick start's key");
    let lastWebhookId: string | undefined;
    const withPort = (text: string) => text.replaceAll("9000", port);
    const checked = await runBlocks(session, base, blocks.slice(startIndex + 1), {
      rewrite: (script) => (lastWebhookId === undefined ? withPort(script) : withPort(script).replace(WEBHOOK_ID, lastWebhookId)),
      compare(answer, shown, where, lang) {
        const [got, expected] = lang === "json" ? [JSON.parse(answer), JSON.parse(withPort(shown))] : [answer, withPort(shown)];
        assert.equal(walkThroughShape(got), walkThroughShape(expected), where);
        lastWebhookId = /"webhookId":"(wh_[0-9a-f]{32})"/.exec(answer)?.[1] ?? lastWebhookId;
      },
      timeoutMs: 90_000,
      context: () => `server: ${said}`,
    });
    assert.ok(checked >= 5, `only ${checked} lines checked`);
  } finally {
    await session.run("kill $(jobs -p) 2>/dev/null; wait", 5_000).catch(() => undefined);
    session.close();
    server.kill("SIGTERM");
    await new Promise((resolve) => (server.exitCode !== null ? resolve(undefined) : server.once("close", resolve)));
    rmSync(dir, { recursive: true, force: true });
  }
});

walkThrough.run();


// ---- custom-store.md's conformance examples pass -------------------------------------------

const conformance = suite("docs: custom-store.md's conformance-suite examples run and pass");

conformance("each ts block of custom-store.md that registers formsink/testing suites passes as shown, with node:test or uvu", async () => {
  assert.ok(existsSync(join(ROOT, "dist/src/testing/index.js")), "dist/ is missing: run npm run build first");
  const file = join(ROOT, "docs/custom-store.md");
  const blocks = codeBlocks(file).filter((block) => block.lang === "ts" && block.code.includes('from "formsink/testing"'));
  assert.ok(blocks.length >= 2, `only ${blocks.length} examples found`);
  // Inside the repository, so that `formsink/...` resolves to this package (dist/) by its name.
  const dir = join(ROOT, ".docs-run");
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir);
  try {
    for (const block of blocks) {
      const where = `${relative(ROOT, file)}:${block.line}`;
      const script = join(dir, `custom-store_line${block.line}.ts`);
      writeFileSync(script, block.code);
      // A node:test file runs under --test, which sets the exit code when a test fails; uvu sets it itself.
      const args = ["--import", "tsx", ...(block.code.includes('from "node:test"') ? ["--test", "--test-reporter", "dot"] : []), script];
      const result = await run(process.execPath, args, { cwd: ROOT, timeout: 120_000, env: { ...process.env, NO_COLOR: "1" } }).then(
        () => "",
        (error: { stdout?: string; stderr?: string; message: string }) => `${error.stdout ?? ""}${error.stderr ?? ""}` || error.message,
      );
      assert.is(result, "", `${where}: the example's suites fail`);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

conformance.run();

// ---- query parameters -----------------------------------------------------------------------

const parameters = suite("docs: every query parameter a route reads is named where the docs describe the route");

/** The text of `page` under the `## ` heading `heading`, up to the next `## ` heading. */
function textUnder(page: string, heading: string): string {
  const text = readFileSync(join(ROOT, page), "utf8");
  const start = text.indexOf(`\n${heading}\n`);
  assert.ok(start !== -1, `${page} has no heading "${heading}"`);
  const end = text.indexOf("\n## ", start + 1);
  return text.slice(start, end === -1 ? undefined : end);
}

parameters("the list's, the export's, the change log's and the delivery log's", async () => {
  const { deliveriesQuery, eventsQuery, exportQuery, listQuery, queryParameters } = await import("../../src/schemas.ts");
  const listed = queryParameters(listQuery);
  const places = [
    { names: listed, page: "docs/api.md", heading: "## List: GET /api/submission" },
    // The export's section names what it adds to the list's filters and orderBy.
    { names: queryParameters(exportQuery).filter((name) => !listed.includes(name)), page: "docs/api.md", heading: "## Export: GET /api/submission/export" },
    { names: queryParameters(eventsQuery), page: "docs/events.md", heading: "## Reading the log" },
    { names: queryParameters(deliveriesQuery), page: "docs/webhooks.md", heading: "## Endpoints" },
  ];
  const missing = places.flatMap(({ names, page, heading }) => {
    const text = textUnder(page, heading);
    return names.filter((name) => !text.includes(`\`${name}\``)).map((name) => `${page} "${heading}" does not name ${name}`);
  });
  assert.ok(places.every(({ names }) => names.length > 0));
  assert.equal(missing, []);
});

parameters.run();

// ---- links ----------------------------------------------------------------------------------

const links = suite("docs: every relative link leads to a file and heading that exist");

/** GitHub's anchor for a heading: lower case, punctuation dropped, each space a hyphen. */
function slug(heading: string): string {
  return heading
    .replace(/\[([^\]]*)\]\([^)]*\)/g, "$1")
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, "")
    .replace(/\s/g, "-");
}

/** The anchors a Markdown file offers: its headings (numbered when repeated) and explicit ids. */
function anchors(file: string): Set<string> {
  const found = new Set<string>();
  const text = readFileSync(file, "utf8").replace(/^\s*```[\s\S]*?^\s*```\s*$/gm, "");
  const seen = new Map<string, number>();
  for (const [, heading] of text.matchAll(/^#{1,6}\s+(.+?)\s*#*\s*$/gm)) {
    const base = slug(heading!);
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    found.add(count === 0 ? base : `${base}-${count}`);
  }
  for (const [, id] of text.matchAll(/\sid="([^"]+)"/g)) found.add(id!);
  return found;
}

links("relative links in README.md, docs/*.md and bench/README.md resolve", () => {
  const broken: string[] = [];
  let count = 0;
  for (const page of PAGES) {
    // Code blocks and inline code hold examples, not links.
    const text = readFileSync(page, "utf8").replace(/^\s*```[\s\S]*?^\s*```\s*$/gm, "").replace(/`[^`\n]*`/g, "");
    for (const [, target] of text.matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) {
      if (/^[a-z][a-z0-9+.-]*:/i.test(target!)) continue;
      count++;
      const [path = "", anchor] = target!.split("#");
      const file = path === "" ? page : resolve(dirname(page), decodeURIComponent(path));
      const name = `${relative(ROOT, page)}: ${target}`;
      if (!existsSync(file)) broken.push(`${name} (no such file)`);
      else if (anchor !== undefined && file.endsWith(".md") && !anchors(file).has(anchor)) broken.push(`${name} (no such heading)`);
    }
  }
  assert.ok(count >= 30, `only ${count} links found`);
  assert.equal(broken, []);
});

links.run();

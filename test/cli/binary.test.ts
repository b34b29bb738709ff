// The single `formsink` binary (`npm run build:binary`) as people deploy it: built here from the
// bundled bin (dist/cli/bin.js: `npm test` builds it first), run from an empty directory with
// nothing of this checkout around it, then the container recipe's command as its user would run it.
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { chmodSync, chownSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import type { Submission } from "../../src/submission.ts";
import { clientSuite } from "../client/suite.ts";
import { collect, type Run, waitForOutput } from "../support/process.ts";
import { within } from "../support/within.ts";

const ROOT = new URL("../../", import.meta.url).pathname;
const VERSION: string = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")).version;

const root = mkdtempSync(join(tmpdir(), "formsink-binary-"));
chmodSync(root, 0o755); // the container test runs it as another user
process.once("exit", () => rmSync(root, { recursive: true, force: true }));
const binary = join(root, "formsink");

if (!existsSync(join(ROOT, "dist/cli/bin.js"))) throw new Error("dist/cli/bin.js is missing: run `npm run build` first");
execFileSync(join(ROOT, "node_modules/.bin/bun"), ["scripts/build-binary.ts", "--outfile", binary], { cwd: ROOT, stdio: "pipe" });

/** A fresh empty directory (with its own temp dir, where the binary unpacks libSQL's addon). */
function emptyDir(): { dir: string; env: Record<string, string> } {
  const dir = mkdtempSync(join(root, "run-"));
  mkdirSync(join(dir, ".tmp"));
  return { dir, env: { PATH: "/usr/bin:/bin", TMPDIR: join(dir, ".tmp") } };
}

function formsink(args: string[], place: { dir: string; env: Record<string, string> }): ChildProcess {
  return spawn(binary, args, { cwd: place.dir, env: place.env });
}

const run = (args: string[], place: { dir: string; env: Record<string, string> }): Promise<Run> => collect(formsink(args, place));

async function serve(place: { dir: string; env: Record<string, string> }, args: string[] = []) {
  const server = formsink(["serve", "--port", "0", ...args], place);
  const exited = collect(server);
  const url = (await within(waitForOutput(server, "stdout", /serving (http:\/\/\S+)/), 20_000, "the binary's serving line"))[1]!;
  return {
    url,
    async stop(): Promise<Run> {
      server.kill("SIGTERM");
      return within(exited, 20_000, "the binary's exit after SIGTERM");
    },
  };
}

const binarySuite = suite("binary");

binarySuite("--version and -v print the package version", async () => {
  for (const flag of ["--version", "-v"]) {
    const result = await run([flag], emptyDir());
    assert.is(result.code, 0, result.stderr);
    assert.is(result.stdout, `${VERSION}\n`);
  }
});

binarySuite("serve in an empty directory: the database is made there, named by its absolute path, on Bun", async () => {
  const place = emptyDir();
  const server = await serve(place);
  const result = await server.stop();
  assert.is(result.code, 0, result.stderr);
  assert.match(result.stdout, new RegExp(`^formsink ${VERSION.replaceAll(".", "\\.")} serving http://127\\.0\\.0\\.1:\\d+ \\(database file:${place.dir}/formsink\\.db, bun\\)`));
  assert.match(result.stderr, /database schema created at version \d+/);
  // The log is JSON lines (stderr is no terminal here): the hint is one message in it.
  assert.match(result.stderr, /\\n  formsink keys create --account my-site"/, "the first-key hint names the binary");
});

binarySuite("SIGTERM: in-flight work finishes, exit 0, one self-contained database file that a new start serves", async () => {
  const place = emptyDir();
  const key = (await run(["keys", "create", "--account", "acme"], place)).stdout.trim();
  const first = await serve(place);
  const created = await fetch(`${first.url}/api/submission`, {
    method: "POST",
    headers: { "x-api-key": key, "content-type": "application/json" },
    body: JSON.stringify({ popupId: "p", data: { email: "jane@example.com" } }),
  });
  assert.is(created.status, 201);
  const { submissionId } = (await created.json()) as Submission;
  const result = await first.stop();
  assert.is(result.code, 0, result.stderr);
  assert.match(result.stderr, /SIGTERM: finishing in-flight requests, then closing the database/);
  const wal = join(place.dir, "formsink.db-wal");
  assert.is(existsSync(wal) ? statSync(wal).size : 0, 0, "nothing is left in the WAL");

  // Only the file moves on: a fresh directory with it alone serves the submission.
  const moved = emptyDir();
  writeFileSync(join(moved.dir, "formsink.db"), readFileSync(join(place.dir, "formsink.db")));
  const second = await serve(moved);
  try {
    const reply = await fetch(`${second.url}/api/submission/${submissionId}`, { headers: { "x-api-key": key } });
    assert.is(reply.status, 200);
    assert.is(((await reply.json()) as Submission).data.email, "jane@example.com");
  } finally {
    await second.stop();
  }
});

binarySuite("a bad setting stops the binary at start with exit code 2, naming the env var used", async () => {
  const place = emptyDir();
  const result = await run(["serve"], { ...place, env: { ...place.env, PORT: "abc" } });
  assert.is(result.code, 2);
  assert.match(result.stderr, /^formsink: PORT must be a whole number from 0 to 65535 \(got "abc"\)/);
});

binarySuite.run();

// The typed client's suite against the binary: keys made with `formsink keys create` and rows
// put in with `formsink import`, both by the binary itself next to the running server.
let accounts = 0;
clientSuite("the formsink binary", async () => {
  const place = emptyDir();
  const server = await serve(place);
  return {
    baseUrl: server.url,
    async newAccount() {
      const account = `client-${++accounts}`;
      const created = await run(["keys", "create", "--account", account], place);
      assert.is(created.code, 0, created.stderr);
      return {
        key: created.stdout.trim(),
        async insert(rows) {
          const file = join(place.dir, `${account}-${rows.length}.ndjson`);
          writeFileSync(file, rows.map((row) => JSON.stringify(row)).join("\n"));
          const imported = await run(["import", "--account", account, file], place);
          assert.is(imported.code, 0, imported.stderr);
        },
      };
    },
    async stop() {
      const result = await server.stop();
      assert.is(result.code, 0, result.stderr);
    },
  };
});

// ---- the container recipe -----------------------------------------------------------------
// No container engine runs here: what is checked is what the image is made of and that its
// command, run the way the image runs it, serves from an empty volume.

interface Stage {
  from: string;
  copies: { from?: string; sources: string[] }[];
  env: Record<string, string>;
  user?: string;
  workdir?: string;
  entrypoint?: string[];
  cmd?: string[];
  healthcheck?: string[];
  volumes: string[];
}

function dockerfileStages(text: string): Stage[] {
  const stages: Stage[] = [];
  const instructions = text.replace(/\\\n/g, " ").split("\n").map((line) => line.trim()).filter((line) => line && !line.startsWith("#"));
  for (const line of instructions) {
    const [, instruction, rest] = /^(\w+)\s+(.*)$/.exec(line)!;
    const stage = stages.at(-1)!;
    switch (instruction!.toUpperCase()) {
      case "FROM":
        stages.push({ from: rest!, copies: [], env: {}, volumes: [] });
        break;
      case "COPY": {
        const words = rest!.split(/\s+/);
        const from = words.find((word) => word.startsWith("--from="))?.slice("--from=".length);
        stage.copies.push({ from, sources: words.filter((word) => !word.startsWith("--")).slice(0, -1) });
        break;
      }
      case "ENV":
        for (const [, name, value] of rest!.matchAll(/(\w+)=(\S+)/g)) stage.env[name!] = value!;
        break;
      case "USER":
        stage.user = rest;
        break;
      case "WORKDIR":
        stage.workdir = rest;
        break;
      case "VOLUME":
        stage.volumes.push(rest!);
        break;
      case "ENTRYPOINT":
        stage.entrypoint = JSON.parse(rest!);
        break;
      case "CMD":
        stage.cmd = JSON.parse(rest!);
        break;
      case "HEALTHCHECK":
        stage.healthcheck = JSON.parse(rest!.slice(rest!.indexOf("CMD ") + 4));
        break;
    }
  }
  return stages;
}

const stages = dockerfileStages(readFileSync(join(ROOT, "Dockerfile"), "utf8"));
const image = stages.at(-1)!;
const container = suite("container recipe");

container("the build stage copies files that exist and builds the binary the image runs", () => {
  const build = stages[0]!;
  for (const { sources } of build.copies) for (const source of sources) assert.ok(existsSync(join(ROOT, source)), `COPY ${source}: no such file`);
  assert.equal(image.copies.map((copy) => copy.sources), [["/src/dist/formsink"]]);
  assert.match(readFileSync(join(ROOT, "Dockerfile"), "utf8"), /RUN npm run build:binary/);
  assert.match(JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")).scripts["build:binary"], /build-binary\.ts/);
  for (const ignored of ["node_modules", "dist", "*.db"]) assert.ok(readFileSync(join(ROOT, ".dockerignore"), "utf8").split("\n").includes(ignored), ignored);
});

container("the image's command, as its non-root user with an empty /data, serves there; its HEALTHCHECK asks that server", async () => {
  assert.ok(image.user && image.user !== "root", "the image runs as a user of its own");
  assert.equal(image.volumes, ["/data"]);
  assert.equal([...image.entrypoint!, ...image.cmd!], ["formsink", "serve"]);
  assert.equal(image.healthcheck, ["formsink", "health"]);

  // /data as a fresh directory owned by the image's user (uid 10001, made in the Dockerfile).
  const { dir } = emptyDir();
  const data = join(dir, "data");
  mkdirSync(data, { mode: 0o750 });
  const uid = Number(/--uid (\d+)/.exec(readFileSync(join(ROOT, "Dockerfile"), "utf8"))![1]);
  const asImageUser = process.getuid?.() === 0;
  if (asImageUser) {
    for (const path of [dir, data, join(dir, ".tmp")]) chownSync(path, uid, uid);
  }
  const env = Object.fromEntries(Object.entries(image.env).map(([name, value]) => [name, value.replace(/^\/data\b/, data)]));
  // PORT 0 instead of the image's 8787, which may be taken on this machine.
  const placeEnv = { PATH: "/usr/bin:/bin", TMPDIR: join(dir, ".tmp"), ...env, PORT: "0" };
  const command = (args: string[]) =>
    asImageUser
      ? spawn("setpriv", [`--reuid=${uid}`, `--regid=${uid}`, "--clear-groups", binary, ...args], { cwd: data, env: placeEnv })
      : spawn(binary, args, { cwd: data, env: placeEnv });

  const server = command(image.cmd!);
  const exited = collect(server);
  try {
    const url = (await within(waitForOutput(server, "stdout", /serving (http:\/\/\S+)/), 20_000, "the serving line"))[1]!;
    assert.match(url, /^http:\/\/0\.0\.0\.0:\d+$/, "listens on every interface of the container");
    const port = new URL(url).port;
    const health = await collect(spawn(binary, image.healthcheck!.slice(1), { env: { ...placeEnv, PORT: port } }));
    const endpoint = await fetch(`http://127.0.0.1:${port}/api/health`);
    assert.is(health.code === 0, endpoint.ok, `formsink health agrees with GET /api/health (${endpoint.status}): ${health.stderr}`);
  } finally {
    server.kill("SIGTERM");
  }
  const result = await within(exited, 20_000, "exit after SIGTERM");
  assert.is(result.code, 0, result.stderr);
  assert.ok(existsSync(join(data, "formsink.db")), "the database is in the volume");
});

container.run();

// ---- the systemd units ----------------------------------------------------------------------

const systemd = suite("systemd units");

systemd("examples/systemd passes systemd-analyze verify (with the binary where the units expect it)", async () => {
  const units = join(root, "systemd");
  mkdirSync(units);
  for (const name of readdirSync(join(ROOT, "examples/systemd"))) {
    const text = readFileSync(join(ROOT, "examples/systemd", name), "utf8");
    assert.ok(!name.endsWith(".service") || text.includes("/usr/local/bin/formsink"), name);
    writeFileSync(join(units, name), text.replaceAll("/usr/local/bin/formsink", binary));
  }
  const names = readdirSync(units).sort();
  assert.equal(names, ["formsink-backup.service", "formsink-backup.timer", "formsink.service"]);
  const verify = spawn("systemd-analyze", ["verify", ...names], { cwd: units });
  const installed = new Promise<never>((_, reject) => verify.on("error", () => reject(new Error("systemd-analyze is missing: apt-get install systemd"))));
  const result = await Promise.race([collect(verify), installed]);
  assert.is(result.code, 0, result.stderr);
  assert.is(result.stderr, "", "no warnings");
});

systemd.run();

// ---- formsink health --------------------------------------------------------------------

const health = suite("health command");

health("exit 0 and the body on a 2xx, exit 1 naming the status on anything else or no answer", async () => {
  let status = 200;
  const server = createServer((request, response) => {
    response.writeHead(request.url === "/api/health" ? status : 404, { "content-type": "application/json" });
    response.end(status === 200 ? '{"status":"ok"}' : '{"status":"unavailable","message":"the store did not answer"}');
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  const place = emptyDir();
  try {
    const healthy = await run(["health"], { ...place, env: { ...place.env, PORT: String(port) } });
    assert.is(healthy.code, 0, healthy.stderr);
    assert.is(healthy.stdout, '{"status":"ok"}\n');
    status = 503;
    const unhealthy = await run(["health", "--url", `http://127.0.0.1:${port}/api/health`], place);
    assert.is(unhealthy.code, 1);
    assert.match(unhealthy.stderr, /503 \{"status":"unavailable"/);
  } finally {
    await new Promise((resolve) => server.close(resolve));
  }
  const refused = await run(["health", "--url", `http://127.0.0.1:${port}/api/health`], place);
  assert.is(refused.code, 1);
  assert.match(refused.stderr, /no answer/);
  const bad = await run(["health"], { ...place, env: { ...place.env, PORT: "http" } });
  assert.is(bad.code, 2);
  assert.match(bad.stderr, /PORT must be a whole number/);
});

health.run();

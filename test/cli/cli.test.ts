// The `formsink` command as a user runs it: a real process, a real database file, real signals.
import { spawn } from "node:child_process";
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { createClient } from "@libsql/client";
import { collect, waitForOutput } from "../support/process.ts";
import { createLibsqlStore } from "../../src/stores/libsql/index.ts";
import { MIGRATIONS } from "../../src/stores/sql/migrations.ts";
import { FORMSINK, run, runHere } from "./run.ts";
import { roomInWindow } from "../support/rate-window.ts";

const KEY = /^fs_sk_[0-9A-Za-z]{12}_[0-9A-Za-z]{40}$/;

const cli = suite<{ dir: string; db: string }>("cli");

cli.before.each((context) => {
  context.dir = mkdtempSync(join(tmpdir(), "formsink-cli-"));
  context.db = `file:${join(context.dir, "test.db")}`;
});
cli.after.each((context) => rmSync(context.dir, { recursive: true, force: true }));

cli("in a checkout, `npx formsink` runs the built command (as the README's quick start does)", async () => {
  const result = await collect(spawn("npx", ["--no-install", "formsink", "--help"]));
  assert.is(result.code, 0, result.stderr);
  assert.match(result.stdout, /^formsink - form submissions/);
});

cli("`npx formsink` before the first build says to build, and runs the command once built (npx keeps what it linked the first time)", async ({ dir }) => {
  // A checkout as the package sees it: its package.json's name and command, and the files not built.
  const checkout = join(dir, "checkout");
  const { name, version, type, bin } = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8"));
  mkdirSync(checkout);
  writeFileSync(join(checkout, "package.json"), JSON.stringify({ name, version, type, bin }));
  cpSync(new URL("../../bin", import.meta.url), join(checkout, "bin"), { recursive: true });
  const npx = () => collect(spawn("npx", ["formsink", "--help"], { cwd: checkout, env: { ...process.env, npm_config_cache: join(dir, "npm-cache") } }));

  const before = await npx();
  assert.is(before.code, 1, before.stderr);
  assert.match(before.stderr, /not built[^\n]*npm run build/);

  mkdirSync(join(checkout, "dist", "cli"), { recursive: true });
  writeFileSync(join(checkout, "dist", "cli", "bin.js"), 'console.log("the built command:", ...process.argv.slice(2));\n');
  const after = await npx();
  assert.is(after.code, 0, after.stderr);
  assert.is(after.stdout, "the built command: --help\n");
});

cli("--help works on every command and exits 0", async () => {
  for (const args of [["--help"], ["serve", "--help"], ["health", "--help"], ["keys", "--help"], ["keys", "create", "--help"], ["keys", "list", "-h"], ["keys", "revoke", "--help"], ["export", "--help"], ["import", "-h"], ["backup", "--help"], ["restore", "-h"], ["erase", "--help"], ["erasures", "--help"], ["erasures", "list", "-h"]]) {
    const result = await runHere(args);
    assert.is(result.code, 0, args.join(" "));
    assert.match(result.stdout, /Usage:/, args.join(" "));
  }
});

cli("a real process: exit codes reach the shell", async ({ dir }) => {
  assert.is((await run(["keys", "list", "--bogus"])).code, 2);
  assert.is((await run(["keys", "list", "--db", `file:${join(dir, "no", "such", "x.db")}`])).code, 3);
});

cli("several processes opening one fresh database at once all succeed, and migrate it once", async ({ db }) => {
  const results = await Promise.all(Array.from({ length: 4 }, (_, i) => run(["keys", "create", "--account", `a${i}`, "--db", db])));
  for (const result of results) assert.is(result.code, 0, result.stderr);
  const reports = results.filter((result) => result.stderr.includes(`database schema created at version ${MIGRATIONS.length}\n`));
  assert.is(reports.length, 1, "the one process that migrated says so, and only it");
  const client = createClient({ url: db });
  try {
    const { rows } = await client.execute("SELECT version FROM formsink_migrations ORDER BY version");
    assert.equal(rows.map((row) => Number(row.version)), MIGRATIONS.map((_, i) => i + 1));
    assert.is(Number((await client.execute("SELECT COUNT(*) AS n FROM api_keys")).rows[0]!.n), 4);
  } finally {
    client.close();
  }
});

cli("a database of an older schema is upgraded at start, saying from which version to which", async ({ db }) => {
  const client = createClient({ url: db });
  try {
    // The database as the formsink one migration older left it.
    await client.execute("CREATE TABLE formsink_migrations (version INTEGER PRIMARY KEY, applied_at TEXT NOT NULL)");
    for (const [i, statements] of MIGRATIONS.slice(0, -1).entries()) {
      await client.batch([{ sql: "INSERT INTO formsink_migrations VALUES (?, 'earlier')", args: [i + 1] }, ...statements], "write");
    }
  } finally {
    client.close();
  }
  const upgraded = await run(["keys", "list", "--db", db]);
  assert.is(upgraded.code, 0, upgraded.stderr);
  assert.match(upgraded.stderr, new RegExp(`^database schema upgraded from version ${MIGRATIONS.length - 1} to ${MIGRATIONS.length}\n`));
  const again = await run(["keys", "list", "--db", db]);
  assert.not.match(again.stderr, /database schema/);
});

cli("an upgrade that fails leaves the database at the version it started from, untouched", async ({ db }) => {
  const client = createClient({ url: db });
  try {
    await client.execute("CREATE TABLE formsink_migrations (version INTEGER PRIMARY KEY, applied_at TEXT NOT NULL)");
    await client.batch([{ sql: "INSERT INTO formsink_migrations VALUES (1, 'earlier')" }, ...MIGRATIONS[0]!], "write");
    // In the way of the last table the migrations create: every migration after 1 must roll back.
    const lastTable = MIGRATIONS.flat().flatMap((sql) => /CREATE TABLE (\w+)/.exec(sql)?.[1] ?? []).at(-1)!;
    await client.execute(`CREATE TABLE ${lastTable} (x)`);
  } finally {
    client.close();
  }
  const failed = await run(["keys", "list", "--db", db]);
  assert.is(failed.code, 1);
  assert.match(failed.stderr, /cannot open database/);
  assert.not.match(failed.stderr, /database schema upgraded/);
  const check = createClient({ url: db });
  try {
    assert.equal((await check.execute("SELECT version FROM formsink_migrations")).rows.map((row) => Number(row.version)), [1]);
    const tables = (await check.execute("SELECT name FROM sqlite_master WHERE type = 'table' AND name = 'idempotency_keys'")).rows;
    assert.equal(tables, [], "migration 2's tables were rolled back with the rest");
  } finally {
    check.close();
  }
});

cli("a database from a newer formsink is refused at start naming both schema versions, and left as it is", async ({ db }) => {
  assert.is((await runHere(["keys", "create", "--account", "a", "--db", db])).code, 0);
  const client = createClient({ url: db });
  try {
    await client.execute({ sql: "INSERT INTO formsink_migrations VALUES (?, 'later')", args: [MIGRATIONS.length + 1] });
  } finally {
    client.close();
  }
  for (const args of [["serve", "--port", "0", "--db", db], ["keys", "list", "--db", db]]) {
    const result = await run(args);
    assert.is(result.code, 1, result.stderr);
    assert.match(result.stderr, new RegExp(`database schema version ${MIGRATIONS.length + 1} is newer than this formsink knows \\(${MIGRATIONS.length}\\).*upgrade formsink`));
  }
  const check = createClient({ url: db });
  try {
    assert.is(Number((await check.execute("SELECT MAX(version) AS v FROM formsink_migrations")).rows[0]!.v), MIGRATIONS.length + 1);
  } finally {
    check.close();
  }
});

cli("a real process: the database, its WAL, a backup and an export are not readable by other users", async ({ dir, db }) => {
  const path = db.slice("file:".length);
  assert.is((await run(["keys", "create", "--account", "acme", "--db", db])).code, 0);
  const backup = join(dir, "backup.db");
  assert.is((await run(["backup", "--output", backup, "--db", db])).code, 0);
  const exported = join(dir, "acme.csv");
  assert.is((await run(["export", "--account", "acme", "--output", exported, "--db", db])).code, 0);
  for (const file of [path, `${path}-wal`, backup, exported].filter((file) => existsSync(file))) {
    assert.is(statSync(file).mode & 0o007, 0, `${file} has no permission for others`);
  }
  assert.ok(existsSync(backup) && existsSync(exported));
});

cli("--version and -v print the package version", async () => {
  const { version } = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8"));
  for (const flag of ["--version", "-v"]) {
    const result = await runHere([flag]);
    assert.is(result.code, 0);
    assert.is(result.stdout, `${version}\n`);
  }
});

cli("keys create prints the key alone on stdout and the rest on stderr", async ({ db }) => {
  const result = await run(["keys", "create", "--account", "acme", "--db", db]);
  assert.is(result.code, 0);
  assert.match(result.stdout, /^fs_sk_\S+\n$/);
  assert.match(result.stdout.trim(), KEY);
  assert.match(result.stderr, /shown only this once/);
  assert.not.match(result.stderr, result.stdout.trim());
});

cli("erase deletes a person's submissions and prints the receipt; erasures list finds it again by the value", async ({ db }) => {
  assert.is((await runHere(["keys", "create", "--account", "acme", "--db", db])).code, 0);
  const store = await createLibsqlStore({ url: db });
  const account = (await store.findAccount("acme"))!;
  const row = (email: string) => ({
    submissionId: crypto.randomUUID(), popupId: "p", data: { email }, domain: "", userAgent: "", device: "unknown" as const, status: "pending" as const,
    createdAt: "2025-07-12T10:30:00.000Z",
  });
  const jane = row("Jane@Example.com");
  await store.importSubmissions(account.id, [jane, row("john@example.com")]);
  await store.close();

  const dry = await runHere(["erase", "--account", "acme", "--field", "email", "--value", "jane@example.com", "--dry-run", "--db", db]);
  assert.is(dry.code, 0, dry.stderr);
  assert.equal(JSON.parse(dry.stdout).submissionIds, [jane.submissionId]);
  const done = await runHere(["erase", "--account", "acme", "--field", "email", "--value", "jane@example.com", "--db", db]);
  assert.is(done.code, 0, done.stderr);
  const receipt = JSON.parse(done.stdout);
  assert.equal([receipt.matched, receipt.deleted, receipt.submissionIds], [1, 1, [jane.submissionId]]);

  const all = await runHere(["erasures", "list", "--account", "acme", "--db", db]);
  assert.equal(all.stdout.trim().split("\n").map((line) => JSON.parse(line)), [receipt]);
  const found = await runHere(["erasures", "list", "--account", "acme", "--field", "email", "--value", "JANE@example.com", "--db", db]);
  assert.equal(JSON.parse(found.stdout), receipt);
  const other = await runHere(["erasures", "list", "--account", "acme", "--field", "email", "--value", "john@example.com", "--db", db]);
  assert.is(other.stdout.trim(), "");
  const file = readFileSync(db.slice("file:".length)).toString("latin1").toLowerCase();
  assert.not.ok(file.includes("jane@example.com"), "the database file no longer holds the value, in any case");
  assert.ok(file.includes("john@example.com"), "what was not erased is there to be found");

  const refused = await runHere(["erase", "--account", "acme", "--field", "phone", "--value", "1", "--db", db]);
  assert.is(refused.code, 2);
  assert.match(refused.stderr, /identifying fields this deployment indexes: email/);
  assert.is((await runHere(["erase", "--account", "nobody", "--field", "email", "--value", "x", "--db", db])).code, 1);
});

cli("keys list shows prefixes, never keys, and filters by account", async ({ db }) => {
  const secret = (await runHere(["keys", "create", "--account", "acme", "--db", db])).stdout.trim();
  const publishable = await runHere(["keys", "create", "--account", "other", "--kind", "publishable", "--domain", "Example.COM", "--db", db]);
  assert.is(publishable.code, 0);
  assert.match(publishable.stdout.trim(), /^fs_pk_/);

  const table = await runHere(["keys", "list", "--db", db]);
  assert.is(table.code, 0);
  assert.ok(table.stdout.includes(secret.slice(0, 18)));
  assert.not.ok(table.stdout.includes(secret));
  assert.not.ok(table.stdout.includes(publishable.stdout.trim()));

  const json = JSON.parse((await runHere(["keys", "list", "--account", "other", "--json", "--db", db])).stdout);
  assert.is(json.length, 1);
  assert.equal(json[0].kind, "publishable");
  assert.equal(json[0].account, "other");
  assert.equal(json[0].domains, ["example.com"]);
  assert.is(json[0].revoked, null);
});

cli("bad flags, bad values and bad database URLs exit non-zero with a clear message", async ({ db, dir }) => {
  const cases: [string[], number, RegExp][] = [
    [["keys", "list", "--bogus"], 2, /^formsink: Unknown option '--bogus'\nRun "formsink keys --help" for usage\.\n?$/],
    [["import", "--account", "a", "--dry-run", "x.ndjson"], 2, /^formsink: Unknown option '--dry-run'\n/],
    [["keys", "create", "--db", db], 2, /needs --account/],
    [["keys", "create", "--account", "a", "--kind", "admin", "--db", db], 2, /--kind must be secret or publishable/],
    [["keys", "create", "--account", "a", "--kind", "publishable", "--db", db], 2, /needs at least one domain/],
    [["keys", "create", "--account", "a", "--kind", "publishable", "--domain", "not a host", "--db", db], 2, /not a host name/],
    [["keys", "create", "--account", "a b", "--db", db], 2, /account name/],
    [["keys", "list", "--db", "mysql://x"], 2, /--db must be a libSQL URL .*, or postgres:\/\/\.\.\./],
    [["keys", "list", "--db", `file:${join(dir, "missing", "dir", "x.db")}`], 3, /cannot open database .*: the directory .* does not exist$/m],
    [["serve", "--port", "99999", "--db", db], 2, /--port must be a whole number/],
    [["serve", "--trust-proxy", "yes", "--db", db], 2, /--trust-proxy must be a whole number of proxies/],
    [["serve", "--rate-limits", "redis", "--db", db], 2, /--rate-limits must be memory or database/],
    [["keys", "revoke", "fs_sk_doesnotexist", "--db", db], 1, /no API key/],
    [["frobnicate"], 2, /unknown command "frobnicate"/],
    [[], 2, /Usage:/],
  ];
  for (const [args, code, message] of cases) {
    const result = await runHere(args);
    assert.is(result.code, code, `${args.join(" ")}: ${result.stderr}`);
    assert.match(result.stderr, message, args.join(" "));
    assert.is(result.stdout, "", args.join(" "));
  }
});

cli("keys create with a bad account, kind or domain opens no database: none is created", async ({ dir }) => {
  const untouched = join(dir, "untouched.db");
  for (const args of [
    ["--account", "a b"],
    ["--account", "a", "--kind", "publishable"],
    ["--account", "a", "--kind", "publishable", "--domain", "not a host"],
    ["--account", "a", "--domain", "example.com"],
  ]) {
    const result = await runHere(["keys", "create", ...args, "--db", `file:${untouched}`]);
    assert.is(result.code, 2, `${args.join(" ")}: ${result.stderr}`);
    assert.not.match(result.stderr, /schema/, args.join(" "));
  }
  assert.not.ok(existsSync(untouched), "a refused command line created the database file");
});

cli("FORMSINK_DB chooses the database when --db is absent", async ({ db }) => {
  await runHere(["keys", "create", "--account", "from-env"], { FORMSINK_DB: db });
  const json = JSON.parse((await runHere(["keys", "list", "--json", "--db", db])).stdout);
  assert.equal(json.map((key: { account: string }) => key.account), ["from-env"]);
});

cli("serve --db :memory: says the database is out of reach of keys create, and offers no such command", async () => {
  const server = spawn(process.execPath, [...FORMSINK, "serve", "--port", "0", "--db", ":memory:"]);
  const exited = collect(server);
  await waitForOutput(server, "stderr", /use it with/);
  server.kill("SIGTERM");
  const result = await exited;
  assert.is(result.code, 0);
  assert.match(result.stderr, /The database is in memory: it starts empty, is gone when the server stops/);
  assert.not.match(result.stderr, /keys create --account/);
});

cli("serve: first-key hint, a CLI key works, revoke takes effect at once, SIGTERM exits 0", async ({ db }) => {
  const server = spawn(process.execPath, [...FORMSINK, "serve", "--port", "0", "--db", db]);
  const exited = collect(server);
  const url = (await waitForOutput(server, "stdout", /serving (http:\/\/\S+)/))[1]!;
  try {
    const key = (await run(["keys", "create", "--account", "acme", "--db", db])).stdout.trim();
    const list = () => fetch(`${url}/api/submission`, { headers: { "x-api-key": key } });
    assert.is((await list()).status, 200);
    const created = await fetch(`${url}/api/submission`, {
      method: "POST",
      headers: { "x-api-key": key, "content-type": "application/json" },
      body: JSON.stringify({ popupId: "p1", data: { email: "jane@example.com" } }),
    });
    assert.is(created.status, 201);

    assert.is((await runHere(["keys", "revoke", key.slice(0, 18), "--db", db])).code, 0);
    const refused = await list();
    assert.is(refused.status, 401);
    assert.equal(await refused.json(), { message: "Invalid API key" });
  } finally {
    server.kill("SIGTERM");
  }
  const result = await exited;
  assert.is(result.code, 0);
  assert.match(result.stderr, /No API keys yet\. Create your first one[\s\S]*npx formsink keys create --account my-site --db /);
  const requests = result.stderr.trim().split("\n").map((line) => JSON.parse(line)).filter((line) => line.req);
  assert.equal(requests.map((line) => `${line.req.method} ${line.req.url} ${line.res.statusCode}`), [
    "GET /api/submission 200", "POST /api/submission 201", "GET /api/submission 401",
  ]);
  assert.not.match(result.stderr, /fs_sk_\w{12}_\w{40}/, "the request log never shows a key");
});

cli("serve --rate-limits database --trust-proxy 1: two servers on one database share a client's limit", async ({ db }) => {
  const key = (await runHere(["keys", "create", "--account", "acme", "--kind", "publishable", "--domain", "shop.example.com", "--db", db])).stdout.trim();
  const start = () => spawn(process.execPath, [...FORMSINK, "serve", "--port", "0", "--db", db, "--trust-proxy", "1", "--rate-limits", "database"]);
  const servers = [start(), start()];
  const exits = servers.map(collect);
  try {
    const [first, second] = (await Promise.all(servers.map((server) => waitForOutput(server, "stdout", /serving (http:\/\/\S+)/)))).map((match) => match[1]!) as [string, string];
    const create = (url: string, client: string) =>
      fetch(`${url}/api/submission`, {
        method: "POST",
        headers: { "x-api-key": key, origin: "https://shop.example.com", "content-type": "application/json", "x-forwarded-for": `6.6.6.6, ${client}` },
        body: JSON.stringify({ popupId: "p", data: {} }),
      });
    await roomInWindow(60, 10_000);
    for (let i = 0; i < 30; i++) assert.is((await create(i % 2 === 0 ? first : second, "198.51.100.7")).status, 201, `request ${i + 1}`);
    const refused = await create(second, "198.51.100.7");
    assert.is(refused.status, 429);
    assert.match(refused.headers.get("ratelimit-policy") ?? "", /^"publishable";q=30;w=60$/);
    // the address the proxy saw decides, not what the client wrote further left
    assert.is((await create(first, "198.51.100.8")).status, 201);
  } finally {
    for (const server of servers) server.kill("SIGTERM");
  }
  for (const result of await Promise.all(exits)) assert.is(result.code, 0, result.stderr);
});

cli.run();

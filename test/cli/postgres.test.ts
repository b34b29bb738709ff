/**
 * The command on a PostgreSQL database (a throwaway cluster, test/support/postgres.ts): `--db
 * postgres://...` and FORMSINK_DB for keys, import, export and a real `serve` process; backup
 * and restore point to PostgreSQL's own tools; an unreachable server, an unknown role and a
 * missing database are storage errors.
 */
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { POSTGRES_SCHEMA_VERSION } from "../../src/stores/postgres/migrations.ts";
import { collect, waitForOutput } from "../support/process.ts";
import { sharedCluster, stopClusterAfterSuites } from "../support/postgres.ts";
import { FORMSINK, runHere } from "./run.ts";

const PASSWORD = "pw-marker-71c4";

const cli = suite<{ dir: string; url: string; drop: () => Promise<void> }>("formsink on PostgreSQL");

cli.before.each(async (context) => {
  context.dir = mkdtempSync(join(tmpdir(), "formsink-pg-cli-"));
  const database = await (await sharedCluster()).createDatabase();
  // The cluster trusts every local connection: the password is there to be kept out of output.
  context.url = database.url.replace("postgres@", `postgres:${PASSWORD}@`);
  context.drop = database.drop;
});
cli.after.each(async (context) => {
  rmSync(context.dir, { recursive: true, force: true });
  await context.drop();
});

cli("keys, import and export with --db and FORMSINK_DB; the schema is reported once; the password never shows", async ({ dir, url }) => {
  const created = await runHere(["keys", "create", "--account", "acme", "--db", url]);
  assert.is(created.code, 0, created.stderr);
  assert.match(created.stdout, /^fs_sk_/);
  assert.ok(created.stderr.includes(`database schema created at version ${POSTGRES_SCHEMA_VERSION}\n`), created.stderr);
  const listed = await runHere(["keys", "list"], { FORMSINK_DB: url });
  assert.is(listed.code, 0, listed.stderr);
  assert.match(listed.stdout, /acme/);
  assert.not.match(listed.stderr, /schema/, "a current schema is not reported");

  const records = Array.from({ length: 1500 }, (_, i) => ({
    submissionId: crypto.randomUUID(),
    popupId: i % 2 === 0 ? "even" : "odd",
    data: { email: `user${i}@example.com`, i },
    domain: "example.com",
    userAgent: "agent",
    device: "desktop",
    status: "pending",
    createdAt: new Date(Date.UTC(2025, 0, 1) + i * 1000).toISOString(),
  }));
  const file = join(dir, "in.ndjson");
  writeFileSync(file, records.map((record) => JSON.stringify(record)).join("\n"));
  const imported = await runHere(["import", "--account", "acme", file], { FORMSINK_DB: url });
  assert.is(imported.code, 0, imported.stderr);
  assert.match(imported.stderr, /Imported 1,500 new submissions/);
  const again = await runHere(["import", "--account", "acme", "--db", url, file]);
  assert.is(again.code, 0, again.stderr);
  assert.match(again.stderr, /Imported 0 new submissions.*1,500 already there/);

  const exported = await runHere(["export", "--account", "acme", "--format", "ndjson", "--popup-id", "odd", "--order-by", "created_at", "--db", url]);
  assert.is(exported.code, 0, exported.stderr);
  const lines = exported.stdout.trim().split("\n").map((line) => JSON.parse(line) as { submissionId: string });
  assert.equal(lines.map((line) => line.submissionId), records.filter((_, i) => i % 2 === 1).map((record) => record.submissionId));
  for (const run of [created, listed, imported, exported]) assert.not.ok(`${run.stdout}${run.stderr}`.includes(PASSWORD));
});

cli("serve --db postgres://... takes and lists submissions; its banner names the database without the password", async ({ url }) => {
  const key = (await runHere(["keys", "create", "--account", "acme", "--db", url])).stdout.trim();
  const child = spawn(process.execPath, [...FORMSINK, "serve", "--port", "0", "--log-format", "json"], { env: { ...process.env, FORMSINK_DB: url } });
  const exited = collect(child);
  try {
    const banner = await waitForOutput(child, "stdout", /serving (http:\/\/\S+) \(database (\S+),/);
    const [, server, shown] = banner as unknown as [string, string, string];
    assert.not.ok(shown.includes(PASSWORD));
    assert.match(shown, /^postgres:\/\/postgres@127\.0\.0\.1:\d+\/formsink_test_/);
    const created = await fetch(`${server}/api/submission`, {
      method: "POST",
      headers: { "x-api-key": key, "content-type": "application/json" },
      body: JSON.stringify({ popupId: "p1", data: { email: "a@example.com" } }),
    });
    assert.is(created.status, 201, await created.clone().text());
    const listed = (await (await fetch(`${server}/api/submission`, { headers: { "x-api-key": key } })).json()) as { total: number };
    assert.is(listed.total, 1);
  } finally {
    child.kill("SIGTERM");
  }
  const { code, stdout, stderr } = await exited;
  assert.is(code, 0, stderr);
  assert.not.ok(`${stdout}${stderr}`.includes(PASSWORD));
});

cli("serve's first-key hint on a URL with a password says to set FORMSINK_DB (the URL shown without it would not authenticate), and runs as shown with it", async ({ url }) => {
  const child = spawn(process.execPath, [...FORMSINK, "serve", "--port", "0", "--log-format", "json", "--db", url]);
  const exited = collect(child);
  try {
    await waitForOutput(child, "stderr", /No API keys yet/);
  } finally {
    child.kill("SIGTERM");
  }
  const { code, stderr } = await exited;
  assert.is(code, 0, stderr);
  const hint = stderr.trim().split("\n").map((line) => JSON.parse(line) as { msg: string }).find((line) => line.msg.startsWith("No API keys yet"))!.msg;
  assert.match(hint, /with FORMSINK_DB set to this server's database URL:\n/);
  const command = /\n {2}(?:npx )?formsink (.+)$/.exec(hint)![1]!;
  assert.equal(command, "keys create --account my-site", "no --db: the URL shown without its password would not open a database that asks for one");
  const created = await runHere(command.split(" "), { FORMSINK_DB: url });
  assert.is(created.code, 0, created.stderr);
  assert.match(created.stdout, /^fs_sk_/);
  assert.not.ok(stderr.includes(PASSWORD));
});

cli("backup and restore point to pg_dump; an unreachable server, an unknown role or a missing database is a storage error (exit 3), named without its password", async ({ dir, url }) => {
  const backup = await runHere(["backup", "--output", join(dir, "b.db"), "--db", url]);
  assert.is(backup.code, 2);
  assert.match(backup.stderr, /pg_dump/);
  const restore = await runHere(["restore", "--input", join(dir, "b.db"), "--db", url]);
  assert.is(restore.code, 2);
  assert.match(restore.stderr, /pg_dump/);

  // Port 1 on the loopback: nothing listens there, so the connection is refused at once.
  const unreachable = await runHere(["keys", "list", "--db", `postgres://postgres:${PASSWORD}@127.0.0.1:1/nothing`]);
  assert.is(unreachable.code, 3, unreachable.stderr);
  assert.match(unreachable.stderr, /cannot open database postgres:\/\/postgres@127\.0\.0\.1:1\/nothing: the database is unreachable/);
  assert.not.ok(unreachable.stderr.includes(PASSWORD));

  // The server answers, but refuses: a role it does not know (SQLSTATE 28000), a database it lacks (3D000).
  const unknownRole = await runHere(["keys", "list", "--db", url.replace(`postgres:${PASSWORD}@`, `nobody:${PASSWORD}@`)]);
  assert.is(unknownRole.code, 3, unknownRole.stderr);
  assert.match(unknownRole.stderr, /^formsink: cannot open database postgres:\/\/nobody@127\.0\.0\.1:\d+\/formsink_test_\w+: role "nobody" does not exist\n$/);
  const missingDatabase = await runHere(["keys", "list", "--db", url.replace(/\/formsink_test_\w+/, "/no_such_database")]);
  assert.is(missingDatabase.code, 3, missingDatabase.stderr);
  assert.match(missingDatabase.stderr, /: database "no_such_database" does not exist\n$/);
  for (const run of [unknownRole, missingDatabase]) assert.not.ok(run.stderr.includes(PASSWORD));
});

cli.run();
stopClusterAfterSuites();

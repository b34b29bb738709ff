// `formsink export` and `formsink import`: data out of one database and into another, exactly.
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createClient } from "@libsql/client";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import type { CompleteStore } from "../../src/store.ts";
import { createLibsqlStore } from "../../src/stores/libsql/index.ts";
import type { Submission } from "../../src/submission.ts";
import { awkwardSubmissions } from "../import/support.ts";
import { collect } from "../support/process.ts";
import { FORMSINK, runHere } from "./run.ts";

interface Context {
  dir: string;
  source: string;
  target: string;
}

const data = suite<Context>("cli: export and import");

data.before.each((context) => {
  context.dir = mkdtempSync(join(tmpdir(), "formsink-data-"));
  context.source = `file:${join(context.dir, "source.db")}`;
  context.target = `file:${join(context.dir, "target.db")}`;
});
data.after.each((context) => rmSync(context.dir, { recursive: true, force: true }));

async function withStore<T>(url: string, use: (store: CompleteStore) => Promise<T>): Promise<T> {
  const store = await createLibsqlStore({ url });
  try {
    return await use(store);
  } finally {
    await store.close();
  }
}

/** Every submission of the account, in the list order: what "the same data" means. */
async function everything(url: string, account: string): Promise<Submission[]> {
  return withStore(url, async (store) => {
    const found = await store.findAccount(account);
    if (!found) return [];
    const all: Submission[] = [];
    for (;;) {
      const last = all.at(-1);
      const page = await store.walkSubmissions(found.id, {
        order: "asc", limit: 500, after: last && { createdAt: Date.parse(last.createdAt), submissionId: last.submissionId },
      });
      all.push(...page);
      if (page.length < 500) return all;
    }
  });
}

/** An account with every awkward value, plus enough rows for several export pages. */
async function seed(url: string, account = "acme"): Promise<Submission[]> {
  return withStore(url, async (store) => {
    const { id } = await store.ensureAccount(account);
    const rows = [
      ...awkwardSubmissions(),
      ...Array.from({ length: 2100 }, (_, i): Submission => ({
        submissionId: crypto.randomUUID(),
        popupId: `popup_${i % 4}`,
        data: i % 3 === 0 ? { email: `u${i}@example.com`, consent: i % 2 === 0 } : { name: `Name ${i}`, score: i / 7 },
        domain: "example.com",
        userAgent: "Mozilla/5.0",
        device: "mobile",
        status: i % 5 === 0 ? "completed" : "pending",
        createdAt: new Date(Date.UTC(2025, 8, 1) + Math.floor(i / 2)).toISOString(),
      })),
    ];
    await store.importSubmissions(id, rows);
    // another account's rows must not travel along
    await store.importSubmissions((await store.ensureAccount("other")).id, awkwardSubmissions().map((s) => ({ ...s, popupId: "other" })));
    return rows;
  });
}

for (const format of ["ndjson", "csv"] as const) {
  data(`${format}: export, then import into an empty database, reproduces every submission exactly`, async ({ dir, source, target }) => {
    const rows = await seed(source);
    const file = join(dir, `export.${format}`);
    const exported = await runHere(["export", "--account", "acme", "--format", format, "--output", file, "--db", source]);
    assert.is(exported.code, 0, exported.stderr);
    assert.match(exported.stderr, new RegExp(`Exported ${rows.length.toLocaleString("en-US")} submissions of account "acme" as ${format} to `));
    assert.not.ok(existsSync(`${file}.partial`));

    const imported = await runHere(["import", "--account", "acme", file, "--db", target]);
    assert.is(imported.code, 0, imported.stderr);
    assert.match(imported.stderr, new RegExp(`Imported ${rows.length.toLocaleString("en-US")} new submissions into account "acme" \\(0 already there\\)`));
    const original = await everything(source, "acme");
    assert.is(original.length, rows.length);
    assert.equal(await everything(target, "acme"), original);
    assert.equal(await everything(target, "other"), []);

    // again: idempotent on submissionId
    const again = await runHere(["import", "--account", "acme", file, "--db", target]);
    assert.is(again.code, 0, again.stderr);
    assert.match(again.stderr, new RegExp(`Imported 0 new submissions into account "acme" \\(${rows.length.toLocaleString("en-US")} already there\\)`));
    assert.equal(await everything(target, "acme"), original);
  });
}

data("a real process: export streams to stdout, filters apply, the progress bar stays off a pipe", async ({ dir, source, target }) => {
  const rows = await seed(source);
  const child = spawn(process.execPath, [...FORMSINK, "export", "--account", "acme", "--format", "ndjson", "--status", "completed", "--order-by", "created_at", "--db", source]);
  const result = await collect(child);
  assert.is(result.code, 0, result.stderr);
  assert.not.ok(result.stderr.includes("\r"), "no progress bar on a pipe");
  const lines = result.stdout.split("\n").filter(Boolean).map((line) => JSON.parse(line) as Submission);
  const completed = rows.filter((row) => row.status === "completed");
  assert.is(lines.length, completed.length);
  assert.ok(lines.every((s, i) => i === 0 || Date.parse(s.createdAt) >= Date.parse(lines[i - 1]!.createdAt)), "oldest first");
  const file = join(dir, "completed.jsonl");
  writeFileSync(file, result.stdout);
  assert.is((await runHere(["import", "--account", "copy", file, "--db", target])).code, 0);
  assert.equal(await everything(target, "copy"), (await everything(source, "acme")).filter((s) => s.status === "completed"));
});

data("an export to a disk that refuses the file (a file size limit, as a full disk or a quota) fails in one line naming the file, leaving nothing", async ({ dir, source }) => {
  await seed(source);
  const file = join(dir, "leads.csv");
  // RLIMIT_FSIZE needs no root: past it, a write fails (EFBIG), as ENOSPC does on a full disk.
  const child = spawn("/usr/bin/prlimit", ["--fsize=50000", process.execPath, ...FORMSINK, "export", "--account", "acme", "--output", file, "--db", source]);
  const result = await collect(child);
  assert.is(result.code, 1, result.stderr);
  assert.match(result.stderr, new RegExp(`^formsink: cannot write ${file}: EFBIG: file too large, write\n$`));
  assert.not.ok(existsSync(file) || existsSync(`${file}.partial`), "no file, whole or partial, is left");
});

data("an import the database refuses midway (a file size limit, as a full disk or a quota) says how far it got and that running it again is safe, and it is", async ({ dir, source, target }) => {
  const rows = await seed(source);
  const file = join(dir, "leads.ndjson");
  assert.is((await runHere(["export", "--account", "acme", "--format", "ndjson", "--output", file, "--db", source])).code, 0);
  // RLIMIT_FSIZE needs no root: the first batch (of 1000) fits under it, the last does not.
  const child = spawn("/usr/bin/prlimit", ["--fsize=2000000", process.execPath, ...FORMSINK, "import", "--account", "acme", file, "--db", target]);
  const stopped = await collect(child);
  assert.is(stopped.code, 3, stopped.stderr);
  const [, went] = /^Stopped: the database refused a batch after ([\d,]+) records of [\d,]+ went in \([\d,]+ new\)\. Run the same import again once fixed: what went in is skipped\.$/m.exec(stopped.stderr) ?? [];
  assert.ok(Number(went?.replaceAll(",", "")) > 0, `a batch went in before the limit:\n${stopped.stderr}`);
  assert.is((await everything(target, "acme")).length, Number(went!.replaceAll(",", "")), "the batches that went in stay, whole");
  const again = await runHere(["import", "--account", "acme", file, "--db", target]);
  assert.is(again.code, 0, again.stderr);
  assert.is((await everything(target, "acme")).length, rows.length);
});

data("a reader that stops early (export | head) ends the export quietly, as a Unix tool ended by SIGPIPE", async ({ source }) => {
  await seed(source);
  for (const format of ["csv", "ndjson"]) {
    const child = spawn(process.execPath, [...FORMSINK, "export", "--account", "acme", "--format", format, "--db", source]);
    let stderr = "";
    child.stderr.on("data", (chunk) => (stderr += chunk));
    child.stdout.once("data", () => child.stdout.destroy());
    const code = await new Promise<number | null>((resolve) => child.on("close", resolve));
    assert.is(stderr, "", `${format}: nothing on stderr`);
    assert.is(code, 141, format);
  }
});

data("a progress bar is drawn on a terminal, and ends at 100%", async ({ dir, source, target }) => {
  const rows = await seed(source);
  const file = join(dir, "out.csv");
  const exported = await runHere(["export", "--account", "acme", "--output", file, "--db", source], {}, { terminal: true });
  assert.is(exported.code, 0, exported.stderr);
  const frames = exported.terminal.split("\r").filter(Boolean);
  assert.ok(frames.length >= 1);
  assert.match(frames.at(-1)!, new RegExp(`^export \\[#+\\] 100% ${rows.length.toLocaleString("en-US")}/${rows.length.toLocaleString("en-US")} rows [\\d,]+ rows/s\\x1b\\[K\\n$`));
  const imported = await runHere(["import", "--account", "acme", file, "--db", target], {}, { terminal: true });
  assert.match(imported.terminal.split("\r").at(-1)!, /^import \[#+\] 100% /);
  // without a terminal, nothing is drawn
  assert.is((await runHere(["export", "--account", "acme", "--output", file, "--db", source])).terminal, "");
});

data("import: a batch the database refuses ends the import; the batches before it stay, none after it is sent", async ({ dir, source, target }) => {
  await seed(source);
  const file = join(dir, "export.ndjson");
  assert.is((await runHere(["export", "--account", "acme", "--format", "ndjson", "--output", file, "--db", source])).code, 0);
  const records = readFileSync(file, "utf8").split("\n").filter(Boolean).map((line) => JSON.parse(line) as Submission);
  // The import sends batches of 1,000 while it reads the next: the second batch is refused.
  const refused = records[1500]!.submissionId;
  await withStore(target, (store) => store.ensureAccount("acme"));
  const raw = createClient({ url: target });
  await raw.execute(`CREATE TRIGGER refuse_one BEFORE INSERT ON submissions WHEN NEW.id = '${refused}' BEGIN SELECT RAISE(ABORT, 'refused by the test'); END`);
  raw.close();
  // Not a storage fault the CLI words: the error itself comes out, as it would of a process.
  const failed = await runHere(["import", "--account", "acme", file, "--db", target]).then(
    (run) => new Error(`the import ended with code ${run.code}: ${run.stderr}`),
    (error: unknown) => error,
  );
  assert.match(String(failed), /refused by the test/);
  const ids = (submissions: Submission[]) => submissions.map((s) => s.submissionId).sort();
  assert.equal(ids(await everything(target, "acme")), ids(records.slice(0, 1000)));
});

data("import: invalid records are reported with file and line, and nothing is imported unless --skip-invalid", async ({ dir, target }) => {
  const [good, other] = awkwardSubmissions();
  const file = join(dir, "mixed.ndjson");
  writeFileSync(file, [
    JSON.stringify(good), "{broken", JSON.stringify({ ...other, status: "archived" }), "", JSON.stringify(other), JSON.stringify({ ...good, extra: 1 }),
  ].join("\n"));
  const refused = await runHere(["import", "--account", "acme", file, "--db", target]);
  assert.is(refused.code, 1);
  assert.ok(refused.stderr.includes(`${file}:2: not valid JSON`), refused.stderr);
  assert.ok(refused.stderr.includes(`${file}:3: status must be "completed" or "pending" (was "archived")`), refused.stderr);
  assert.ok(refused.stderr.includes(`${file}:6: extra is not a known submission field`), refused.stderr);
  assert.match(refused.stderr, /3 invalid records: nothing was imported\. Fix them, or pass --skip-invalid to import the 2 valid ones\./);
  assert.equal(await everything(target, "acme"), []);

  const skipped = await runHere(["import", "--account", "acme", "--skip-invalid", file, "--db", target]);
  assert.is(skipped.code, 0, skipped.stderr);
  assert.match(skipped.stderr, /Imported 2 new submissions into account "acme" \(0 already there, 3 invalid records skipped\)/);
  assert.equal((await everything(target, "acme")).map((s) => s.submissionId).sort(), [good!.submissionId, other!.submissionId].sort());

  const onlyInvalid = join(dir, "invalid.ndjson");
  writeFileSync(onlyInvalid, "{broken\n");
  const none = await runHere(["import", "--account", "acme", onlyInvalid, "--db", target]);
  assert.is(none.code, 1);
  assert.match(none.stderr, /1 invalid record: nothing was imported\. Fix it; no record is valid\.\n$/, "no --skip-invalid offered to import nothing");
});

data("import: pages saved from the seed service's list, several per file and several files", async ({ dir, target }) => {
  const items = awkwardSubmissions();
  const seedItem = (s: Submission, device: string) => ({ ...s, submissionId: s.submissionId.toUpperCase(), device });
  const first = join(dir, "page-1.json");
  const second = join(dir, "page-2.json");
  writeFileSync(first, `${JSON.stringify({ items: items.slice(0, 10).map((s) => seedItem(s, "Desktop")), limit: 10, offset: 0, total: items.length }, null, 2)}\n`);
  writeFileSync(second, [items.slice(10, 20), items.slice(20)].map((page, i) => JSON.stringify({ items: page, limit: 10, offset: 10 + 10 * i, total: items.length })).join("\n"));
  const result = await runHere(["import", "--account", "moved", first, second, "--db", target]);
  assert.is(result.code, 0, result.stderr);
  assert.ok(result.stderr.includes(`${first}:1 items[0]: device "Desktop" taken as desktop`), result.stderr);
  assert.ok(result.stderr.includes(`Imported ${items.length} new submissions into account "moved" (0 already there, 10 devices mapped)`), result.stderr);
  const byTime = [...items].sort((a, b) => a.createdAt.localeCompare(b.createdAt) || a.submissionId.localeCompare(b.submissionId));
  assert.equal(await everything(target, "moved"), byTime);
});

data("mistakes: bad flags, unknown accounts, unreadable files, files that are not UTF-8", async ({ dir, source, target }) => {
  await seed(source);
  const latin1 = join(dir, "latin1.csv");
  writeFileSync(latin1, Buffer.from([0x4a, 0xf6, 0x68, 0x6e, 0x0a]));
  const cases: [string[], number, RegExp][] = [
    [["export", "--db", source], 2, /export needs --account/],
    [["export", "--account", "acme", "--status", "done", "--db", source], 2, /--status must be "completed" or "pending" \(was "done"\)/],
    [["export", "--account", "acme", "--format", "xml", "--db", source], 2, /--format must be "csv" or "ndjson"/],
    [["export", "--account", "acme", "--created-after", "yesterday", "--db", source], 2, /--created-after must be an ISO 8601 instant/],
    [["export", "--account", "nobody", "--db", source], 1, /no account named "nobody"/],
    [["export", "--account", "acme", "--output", join(dir, "missing", "x.csv"), "--db", source], 1, /cannot write .*x\.csv/],
    [["import", "--account", "acme", "--db", target], 2, /import needs at least one FILE/],
    [["import", join(dir, "x.ndjson"), "--db", target], 2, /import needs --account/],
    [["import", "--account", "acme", join(dir, "data.txt"), "--db", target], 2, /cannot tell the format of .*data\.txt.*--format ndjson\|csv\|pages/],
    [["import", "--account", "acme", "--format", "xml", latin1, "--db", target], 2, /--format must be ndjson, csv, pages/],
    [["import", "--account", "acme", join(dir, "absent.csv"), "--db", target], 1, /cannot read .*absent\.csv/],
    [["import", "--account", "acme", latin1, "--db", target], 1, /latin1\.csv is not UTF-8 text/],
  ];
  for (const [args, code, message] of cases) {
    const result = await runHere(args);
    assert.is(result.code, code, `${args.join(" ")}: ${result.stderr}`);
    assert.match(result.stderr, message, args.join(" "));
    assert.is(result.stdout, "", args.join(" "));
  }
  assert.is(await withStore(target, (store) => store.findAccount("acme")), undefined, "a refused import creates no account");
});

data("--help on export and import", async () => {
  for (const command of ["export", "import"]) {
    const result = await runHere([command, "--help"]);
    assert.is(result.code, 0);
    assert.match(result.stdout, new RegExp(`Usage:\\n  formsink ${command} --account NAME`));
  }
});

data.run();

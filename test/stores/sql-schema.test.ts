/**
 * The SQL store's schema (run on libSQL's engine): migrations, and the query plans of every list the API can ask for. Each
 * combination of filters and both orders must be answered by walking an index (SEARCH), never
 * by scanning the table (SCAN) or sorting the result (USE TEMP B-TREE), except that a merge of
 * the tuples' ranges (any equality filter) sorts its few candidates; a total without
 * date bounds reads the maintained counts, not the rows.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { type Client, createClient } from "@libsql/client";
import type { SubmissionQuery } from "../../src/store.ts";
import { createLibsqlStore, libsqlDriver } from "../../src/stores/libsql/index.ts";
import type { SqlStatement } from "../../src/stores/sql/driver.ts";
import { listStatements, pageReading, walkStatement, withChoice } from "../../src/stores/sql/list-query.ts";
import { identifierLookup } from "../../src/stores/sql/identifying-fields.ts";
import { migrate } from "../../src/stores/sql/migrate.ts";
import { dayOf } from "../../src/stores/sql/counting.ts";
import { MIGRATIONS } from "../../src/stores/sql/migrations.ts";

const plans = suite("SQL store: query plans");

const EQUALITY_COLUMNS = { popupId: "popup_id", domain: "domain", device: "device", status: "status" };

function everyListQuery(): SubmissionQuery[] {
  const queries: SubmissionQuery[] = [];
  // (the last spans whole days: its total sums counts per day and counts the two ends)
  const bounds = [{}, { createdAfter: 1 }, { createdBefore: 2 }, { createdAfter: 1, createdBefore: 2 }, { createdAfter: 1, createdBefore: 10 * 86_400_000 + 5 }];
  for (let mask = 0; mask < 16; mask++) {
    const filter = {
      ...(mask & 1 ? { popupId: "popup_a" } : {}),
      ...(mask & 2 ? { domain: "example.com" } : {}),
      ...(mask & 4 ? { device: "mobile" } : {}),
      ...(mask & 8 ? { status: "pending" as const } : {}),
    };
    for (const bound of bounds) {
      for (const order of ["asc", "desc"] as const) queries.push({ ...filter, ...bound, order, limit: 10, offset: 0 });
    }
  }
  return queries;
}

plans("every filter combination, date bound and order is an index walk: no table scan, no sort", async () => {
  const client = createClient({ url: ":memory:" });
  try {
    await migrate(libsqlDriver(client));
    const queries = everyListQuery();
    assert.is(queries.length, 160);
    for (const query of queries) {
      const { page, count, merge, choice, chosenWalk } = listStatements("account", query);
      // a cursor between the date bounds, as in any walk that got past its first page
      const walk = walkStatement("account", { ...query, after: { createdAt: 1.5, submissionId: "id" } }).page;
      const firstWalk = walkStatement("account", query).page;
      // an export's page: deeper than a merge reads
      const exportWalk = walkStatement("account", { ...query, limit: 1000, after: { createdAt: 1.5, submissionId: "id" } }).page;
      const statements: [string, SqlStatement, number][] = [
        ["page", withChoice(choice?.(), page), query.limit], ["count", count, 0], ["walk", walk, query.limit], ["first walk page", firstWalk, query.limit], ["walk", exportWalk, 1000],
      ];
      // a list whose counts choose between a walk and a merge: the walk is its page, the merge read when the walk does not find it
      assert.is(merge !== undefined, pageReading(query, query.limit) === "walk or merge", JSON.stringify(query));
      if (merge) statements.push(["merge", merge(), query.limit], ["chosen walk", chosenWalk!(), query.limit]);
      for (const [what, statement, depth] of statements) {
        const { rows } = await client.execute({ sql: `EXPLAIN QUERY PLAN ${statement.sql}`, args: [...statement.args!] });
        const plan = rows.map((row) => String(row.detail));
        assertIndexWalks(plan, query, what, depth, `${what} (depth ${depth}) of ${JSON.stringify(query)}: ${plan.join(" | ")}`);
      }
    }
  } finally {
    client.close();
  }
});

plans("a merge reads at most the page's depth of each tuple: its sort leaves a tuple's range at the first row that no longer fits", async () => {
  const client = createClient({ url: ":memory:" });
  try {
    await migrate(libsqlDriver(client));
    const roots = new Map<string, number>();
    for (const row of (await client.execute("SELECT name, rootpage FROM sqlite_master")).rows) roots.set(String(row.name), Number(row.rootpage));
    let merges = 0;
    for (const query of everyListQuery()) {
      const { merge } = listStatements("account", query);
      // a walk page past its first, its merge in the same statement; an export's, deeper than a list's
      const statements = [walkStatement("account", { ...query, after: { createdAt: 1.5, submissionId: "id" } }).page, walkStatement("account", { ...query, limit: 1000 }).page];
      if (merge) statements.push(merge());
      for (const statement of statements) {
        const { rows } = await client.execute({ sql: `EXPLAIN ${statement.sql}`, args: [...statement.args!] });
        const program = rows.map((row) => ({ opcode: String(row.opcode), p1: Number(row.p1), p2: Number(row.p2) }));
        // the cursors SQLite opened on the counts (the tuples) and on the tuples' index
        const opened = (root: string) => program.filter((op) => op.opcode === "OpenRead" && op.p2 === roots.get(root)).map((op) => op.p1);
        const [counts, tuples] = [opened("submission_counts"), opened("submissions_by_tuple")];
        if (tuples.length === 0) continue;
        merges++;
        // with every equality filter, one tuple: its range is read in the list's order, without a sort
        if (Object.keys(EQUALITY_COLUMNS).every((field) => field in query)) continue;
        const context = `${JSON.stringify(query)}: ${program.map((op) => `${op.opcode} ${op.p1} ${op.p2}`).join(" | ")}`;
        // Where the sort goes when a row is past its last kept candidate (Last, then a compare
        // with that row): on to the next tuple, not the next row of the same tuple's range.
        const notFitting = program.flatMap((op, i) => (op.opcode === "Last" && /^Idx(LE|LT|GE|GT)$/.test(program[i + 1]?.opcode ?? "") ? [program[program[i + 1]!.p2]!] : []));
        const nextTuple = notFitting.filter((op) => /^(Next|Prev)$/.test(op.opcode) && counts.includes(op.p1));
        assert.is(nextTuple.length, 1, context);
      }
    }
    assert.ok(merges > 50, String(merges));
  } finally {
    client.close();
  }
});

plans("a deep offset with at most one equality filter reads counts per day by key and the popup's or the time index from a day's boundary: no step over every skipped row", async () => {
  const client = createClient({ url: ":memory:" });
  try {
    await migrate(libsqlDriver(client));
    for (const [field, column] of [[undefined, undefined], ...Object.entries(EQUALITY_COLUMNS)] as const) {
      for (const order of ["asc", "desc"] as const) {
        const query: SubmissionQuery = { ...(field === undefined ? {} : { [field]: "value" }), order, limit: 10, offset: 500_000 };
        const { page } = listStatements("account", query);
        const { rows } = await client.execute({ sql: `EXPLAIN QUERY PLAN ${page.sql}`, args: [...page.args!] });
        const plan = rows.map((row) => String(row.detail));
        const context = `${JSON.stringify(query)}: ${plan.join(" | ")}`;
        const days = /^SEARCH submission_value_days USING PRIMARY KEY \(account_id=\? AND field=\?\)$/;
        assert.ok(plan.some((step) => days.test(step)), context);
        const read = plan.filter((step) => step.startsWith("SEARCH submissions") || step.startsWith("SCAN submissions"));
        const index = column === "popup_id" ? "submissions_by_popup (account_id=? AND popup_id=?" : "submissions_by_time (account_id=?";
        assert.equal(read, [`SEARCH submissions USING INDEX ${index} AND created_at${order === "asc" ? ">" : "<"}?)`], context);
      }
    }
  } finally {
    client.close();
  }
});

/** The plan of one statement of a list (`what`: page, count, walk, first walk page) that reads `depth` rows. */
function assertIndexWalks(steps: string[], query: SubmissionQuery, what: string, depth: number, context: string): void {
  assert.ok(steps.length > 0, context);
  const dateBounded = query.createdAfter !== undefined || query.createdBefore !== undefined;
  if (what === "count" && !dateBounded) {
    // a total without dates sums the maintained counts, narrowed by the filters' prefix
    assert.equal(steps.length, 1, context);
    assert.match(steps[0]!, /^SEARCH submission_counts USING PRIMARY KEY \(account_id=\?/, context);
    if ("popupId" in query) assert.ok(steps[0]!.includes("popup_id=?"), context);
    return;
  }
  if (what === "count" && steps[0] === "SCAN CONSTANT ROW") {
    // whole days inside the range from the counts per day, the days at its ends counted
    const parts = steps.slice(1).join("\n").split(/^SCALAR SUBQUERY \d+$/m).map((part) => part.trim().split("\n")).filter((part) => part[0] !== "");
    const equalities = Object.keys(EQUALITY_COLUMNS).filter((field) => field in query).length;
    const index = "popupId" in query ? "submissions_by_popup \\(account_id=\\? AND popup_id=\\?" : "submissions_by_time \\(account_id=\\?";
    // a range of two or more equality filters without a whole day (or an end of a longer one):
    // counted over the popup's or the time index when that holds few rows there (looked at
    // first, a bounded read of the index alone), else over the matching tuples' ranges
    const assertChoice = ([few, walked, merged]: string[][]) => {
      assert.ok(few!.some((step) => new RegExp(`^SEARCH submissions USING COVERING INDEX ${index} AND created_at`).test(step)), context);
      assert.equal(walked!.length, 1, context);
      // (the popup's index holds the status too, migration 21: a popup and a status alone are counted from it)
      const covered = "popupId" in query && "status" in query && !("domain" in query) && !("device" in query);
      assert.match(walked![0]!, new RegExp(`^SEARCH submissions USING ${covered ? "COVERING " : ""}INDEX ${index} AND created_at`), context);
      assertTupleMerge(merged!, query, what, context);
    };
    if (parts[0]![0]!.startsWith("CO-ROUTINE (subquery")) {
      assert.is(parts.length, 3, context);
      assertChoice(parts);
      return;
    }
    if (equalities === 1) {
      // one equality filter: its value's counts per day
      assert.equal(parts[0]!.length, 1, context);
      assert.match(parts[0]![0]!, /^SEARCH d USING PRIMARY KEY \(account_id=\? AND field=\? AND day[<>]/, context);
    } else if (equalities > 1 && "popupId" in query) {
      // each matching tuple's counts per day
      assert.equal(parts[0]!.length, 2, context);
      assert.match(parts[0]![0]!, /^SEARCH c USING PRIMARY KEY \(account_id=\?/, context);
      assert.match(parts[0]![1]!, /^SEARCH d USING PRIMARY KEY \(account_id=\? AND popup_id=\? AND domain=\? AND device=\? AND status=\? AND day[<>]/, context);
    } else if (equalities > 1) {
      // without a popup filter, each matching (domain, device, status)'s counts per day, every
      // popup's together: found from the tuples' totals unless all three are given
      const days = /^SEARCH d USING PRIMARY KEY \(account_id=\? AND domain=\? AND device=\? AND status=\? AND day[<>]/;
      if (equalities === 3) {
        assert.equal(parts[0]!.length, 1, context);
      } else {
        assert.equal(parts[0]!.slice(0, -1), ["CO-ROUTINE c", "SEARCH c USING PRIMARY KEY (account_id=?)", "USE TEMP B-TREE FOR DISTINCT", "SCAN c"], context);
      }
      assert.match(parts[0]!.at(-1)!, days, context);
    } else {
      // without equality filters, the account's own counts per day (its statuses')
      assert.equal(parts[0]!.length, 1, context);
      assert.match(parts[0]![0]!, /^SEARCH d USING PRIMARY KEY \(account_id=\? AND field=\? AND day[<>]/, context);
    }
    assert.ok(parts.length >= 2, context);
    for (let i = 1; i < parts.length; i++) {
      if (parts[i]!.join() !== "SCAN CONSTANT ROW") {
        assertIndexWalks(parts[i]!, query, what, depth, context);
        continue;
      }
      assertChoice(parts.slice(i + 1, i + 4));
      i += 3;
    }
    return;
  }
  // (a dated total counts the rows of the days at its ends as a page with those filters reads them;
  // past its first page, a walk's cursor takes the place of the bound on its side)
  const walkSide = what === "walk" ? (query.order === "asc" ? "createdAfter" : "createdBefore") : undefined;
  const reading = what === "count"
    ? (Object.keys(EQUALITY_COLUMNS).filter((field) => field in query).length >= 2 ? "tuple merge" : "index")
    : pageReading(walkSide ? { ...query, [walkSide]: undefined } : query, depth);
  if (reading === "tuple merge" || what === "merge") {
    assertTupleMerge(steps, query, what, context);
    return;
  }
  let plan = steps;
  if (reading === "walk or merge" || reading === "deep walk or merge") {
    // the counts choose between walking the popup's or the time index (bounded for a page, read
    // once) and the merge: in one statement, or for a list page the walk alone (its merge apart);
    // a list's walk as chosen already reads no counts
    const union = what === "page" || what === "chosen walk" ? steps.length : steps.indexOf("UNION ALL");
    assert.ok(union > 0, context);
    const choice = /^(COMPOUND QUERY|LEFT-MOST SUBQUERY|CO-ROUTINE .*|SCALAR SUBQUERY \d+|MATERIALIZE (walk_pays|walked)|SCAN CONSTANT ROW|SCAN (walk_pays|walked)|SCAN \(subquery-\d+\))$/;
    const walk = steps.slice(0, union).filter((step) => !choice.test(step));
    const counts = walk.filter((step) => /^SEARCH f USING PRIMARY KEY \(account_id=\?( AND popup_id=\?)?\)$/.test(step));
    assert.is(counts.length, what === "chosen walk" ? 0 : 1, context);
    if (what !== "page" && what !== "chosen walk") assertTupleMerge(steps.slice(union + 1), query, what, context);
    plan = walk.filter((step) => !counts.includes(step));
    // a bounded walk reads whole, by rowid, only the rows its filters keep
    if (reading === "walk or merge") assert.is(plan.pop(), "SEARCH submissions USING INTEGER PRIMARY KEY (rowid=?)", context);
    assert.is(plan.length, 1, context);
    // a bounded walk of the popup's index for a status reads the status from the index (migration 21): no table row for an entry it passes
    if (reading === "walk or merge" && "popupId" in query && "status" in query && !("domain" in query) && !("device" in query)) {
      assert.match(plan[0]!, /^SEARCH submissions USING COVERING INDEX submissions_by_popup /, context);
    }
  }
  // The walk is narrowed by the popup (its index, when the list has a popup filter, else the
  // time index's) and every date bound, part of the index lookup.
  const index = "popupId" in query ? "submissions_by_popup \\(account_id=\\? AND popup_id=\\?" : "submissions_by_time \\(account_id=\\?";
  for (const step of plan) {
    assert.match(step, new RegExp(`^SEARCH submissions USING (COVERING )?INDEX ${index}`), context);
    assert.not.match(step, /TEMP B-TREE/, context);
  }
  const lookup = /\((.*)\)$/.exec(plan[0]!)?.[1] ?? "";
  // (past its first page, a walk's cursor takes the place of the bound on its side)
  const cursorSide = what === "walk" ? (query.order === "asc" ? "createdAfter" : "createdBefore") : undefined;
  if (query.createdAfter !== undefined && cursorSide !== "createdAfter") assert.ok(lookup.includes("created_at>?"), context);
  if (query.createdBefore !== undefined && cursorSide !== "createdBefore") assert.ok(lookup.includes("created_at<?"), context);
  // a walk's page starts where the last one ended, inside the index: not by skipping rows
  if (what === "walk") assert.ok(lookup.includes(`(created_at,id)${query.order === "asc" ? ">" : "<"}(?,?)`), context);
}

/**
 * Equality filters: the matching tuples from the counts, each one range of
 * submissions_by_tuple, the dates and the walk's cursor part of every range; the table is read
 * by rowid for the page's rows only. Sorting the candidates (at most depth rows per
 * tuple: the next test) is the merge.
 */
function assertTupleMerge(plan: string[], query: SubmissionQuery, what: string, context: string): void {
  const tuple = /^SEARCH [sk] USING COVERING INDEX submissions_by_tuple \(account_id=\? AND popup_id=\? AND domain=\? AND device=\? AND status=\?(.*)\)$/;
  assert.ok(plan.some((step) => /^SEARCH c USING PRIMARY KEY \(account_id=\?/.test(step)), context);
  for (const step of plan) {
    assert.not.match(step, /^SCAN (submissions|submission_counts|c|s|k)\b/, context);
    if (/^SEARCH submissions /.test(step)) assert.match(step, /USING INTEGER PRIMARY KEY \(rowid=\?\)$/, context);
  }
  const ranges = plan.filter((step) => tuple.test(step)).map((step) => tuple.exec(step)![1]!);
  assert.is(ranges.length, 1, context);
  const cursorSide = what === "walk" ? (query.order === "asc" ? "createdAfter" : "createdBefore") : undefined;
  for (const range of ranges) {
    if (what === "walk") assert.ok(range.includes(`(created_at,id)${query.order === "asc" ? ">" : "<"}(?,?)`), context);
    if (query.createdAfter !== undefined && cursorSide !== "createdAfter") assert.ok(range.includes("created_at>?"), context);
    if (query.createdBefore !== undefined && cursorSide !== "createdBefore") assert.ok(range.includes("created_at<?"), context);
  }
}

plans("an erasure's lookup, and the index rows a delete removes, are found by the index's key, not by a scan", async () => {
  const client = createClient({ url: ":memory:" });
  try {
    await migrate(libsqlDriver(client));
    const lookup = identifierLookup("account", "email", "Jane@Example.com");
    // The delete trigger's statement, with its OLD values bound
    const triggerDelete = {
      sql: `DELETE FROM submission_identifiers WHERE (account_id, field, value_key, submission_id) IN (
              SELECT ?, data_field.key, CASE data_field.key WHEN 'email' THEN lower(data_field.value) ELSE data_field.value END, ?
              FROM json_each(?) AS data_field WHERE data_field.type = 'text')`,
      args: ["account", "id", '{"email":"a@example.com"}'],
    };
    for (const statement of [lookup, triggerDelete]) {
      const { rows } = await client.execute({ sql: `EXPLAIN QUERY PLAN ${statement.sql}`, args: [...statement.args!] });
      const plan = rows.map((row) => String(row.detail)).join(" | ");
      assert.ok(/SEARCH submission_identifiers USING PRIMARY KEY/.test(plan), plan);
      assert.not.ok(/SCAN submission_identifiers/.test(plan), plan);
    }
  } finally {
    client.close();
  }
});

plans.run();

const migrations = suite<{ dir: string; url: string }>("libSQL migrations");

migrations.before.each((context) => {
  context.dir = mkdtempSync(join(tmpdir(), "formsink-schema-"));
  context.url = `file:${join(context.dir, "test.db")}`;
});
migrations.after.each(({ dir }) => rmSync(dir, { recursive: true, force: true }));

/** Brings an empty database to schema version `version`, as the formsink of that version did. */
async function migrateTo(client: Client, version: number): Promise<void> {
  await client.execute("CREATE TABLE formsink_migrations (version INTEGER PRIMARY KEY, applied_at TEXT NOT NULL)");
  await client.batch(
    MIGRATIONS.slice(0, version).flatMap((statements, i) => [
      { sql: "INSERT INTO formsink_migrations VALUES (?, 'then')", args: [i + 1] },
      ...statements.map((sql) => ({ sql, args: [] })),
    ]),
    "write",
  );
}

async function versions(url: string): Promise<number[]> {
  const client = createClient({ url });
  try {
    const { rows } = await client.execute("SELECT version FROM formsink_migrations ORDER BY version");
    return rows.map((row) => Number(row.version));
  } finally {
    client.close();
  }
}

migrations("opening a database again applies nothing twice and keeps the data", async ({ url }) => {
  const first = await createLibsqlStore({ url });
  const account = await first.ensureAccount("acme");
  await first.close();
  const second = await createLibsqlStore({ url });
  assert.equal(await second.ensureAccount("acme"), account);
  await second.close();
  assert.equal(await versions(url), MIGRATIONS.map((_, i) => i + 1));
});

/** Makes the database a formsink database at schema version 1, as an old release left it. */
async function applyVersion1(client: Client): Promise<void> {
  await client.execute("CREATE TABLE formsink_migrations (version INTEGER PRIMARY KEY, applied_at TEXT NOT NULL)");
  await client.batch([{ sql: "INSERT INTO formsink_migrations VALUES (1, 'then')", args: [] }, ...MIGRATIONS[0]!.map((sql) => ({ sql, args: [] }))], "write");
}

migrations("a database at schema version 1 is brought up to date in place and keeps its data", async ({ url }) => {
  const client = createClient({ url });
  await applyVersion1(client);
  await client.execute(
    `INSERT INTO submissions VALUES ('acct', '0193f5c2-7b8e-7cc1-9a1e-4f1f9d6f0c11', 'popup', 'example.com', 'desktop', 'ua',
     'pending', 1752316200000, '{"email":"old@example.com"}')`,
  );
  client.close();

  const store = await createLibsqlStore({ url });
  try {
    assert.equal(await versions(url), MIGRATIONS.map((_, i) => i + 1));
    assert.equal((await store.getSubmission("acct", "0193f5c2-7b8e-7cc1-9a1e-4f1f9d6f0c11"))?.data, { email: "old@example.com" });
    assert.is(await store.countRateLimitHit("bucket", 0, 60_000), 1);
  } finally {
    await store.close();
  }
});

migrations("a file database is in WAL mode", async ({ url }) => {
  await (await createLibsqlStore({ url })).close();
  const client = createClient({ url });
  try {
    assert.is(String((await client.execute("PRAGMA journal_mode")).rows[0]!.journal_mode), "wal");
  } finally {
    client.close();
  }
});

migrations("a database from a newer formsink is refused with a message that says so", async ({ url }) => {
  await (await createLibsqlStore({ url })).close();
  const client = createClient({ url });
  await client.execute({ sql: "INSERT INTO formsink_migrations (version, applied_at) VALUES (?, ?)", args: [MIGRATIONS.length + 1, "later"] });
  client.close();
  let error: unknown;
  await createLibsqlStore({ url }).catch((e: unknown) => (error = e));
  assert.instance(error, Error);
  assert.match((error as Error).message, /newer than this formsink knows.*upgrade formsink/);
});

migrations("a migration that fails leaves the schema at the version before it", async ({ url }) => {
  const client = createClient({ url });
  try {
    await client.execute("CREATE TABLE accounts (id TEXT)"); // collides with migration 1's first table
    let failed = false;
    await migrate(libsqlDriver(client)).catch(() => (failed = true));
    assert.ok(failed);
    assert.equal(await versions(url), []);
    const tables = await client.execute("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name");
    assert.equal(tables.rows.map((row) => String(row.name)), ["accounts", "formsink_migrations"]);
  } finally {
    client.close();
  }
});

migrations("migration 3 fills the data key list from the rows an older database already has", async ({ url }) => {
  const client = createClient({ url });
  try {
    await applyVersion1(client);
    const insert = "INSERT INTO submissions (account_id, id, popup_id, domain, device, user_agent, status, created_at, data) VALUES (?, ?, ?, '', 'unknown', '', 'pending', 0, ?)";
    await client.execute({ sql: insert, args: ["acct", "id-1", "popup_a", '{"email":"a@x","name":"A"}'] });
    await client.execute({ sql: insert, args: ["acct", "id-2", "popup_b", '{"zip":"1"}'] });
  } finally {
    client.close();
  }
  const store = await createLibsqlStore({ url });
  try {
    assert.equal(await store.listDataKeys("acct", {}, 10), ["email", "name", "zip"]);
    assert.equal(await store.listDataKeys("acct", { popupId: "popup_b" }, 10), ["zip"]);
  } finally {
    await store.close();
  }
  assert.equal(await versions(url), MIGRATIONS.map((_, i) => i + 1));
});

migrations("migration 4 counts the rows an older database already has, and the counts follow later writes", async ({ url }) => {
  const client = createClient({ url });
  try {
    await applyVersion1(client);
    const insert = "INSERT INTO submissions (account_id, id, popup_id, domain, device, user_agent, status, created_at, data) VALUES (?, ?, ?, 'example.com', 'mobile', '', ?, 0, '{}')";
    for (let i = 0; i < 7; i++) await client.execute({ sql: insert, args: ["acct", `id-${i}`, i < 5 ? "popup_a" : "popup_b", i % 2 ? "completed" : "pending"] });
    await client.execute({ sql: insert, args: ["other", "id-0", "popup_a", "pending"] });
  } finally {
    client.close();
  }
  const store = await createLibsqlStore({ url });
  const total = async (filter: object) => (await store.listSubmissions("acct", { ...filter, order: "asc", limit: 1, offset: 0 })).total;
  try {
    assert.equal([await total({}), await total({ popupId: "popup_a" }), await total({ status: "completed" }), await total({ popupId: "popup_b", status: "pending" })], [7, 5, 3, 1]);
    await store.setSubmissionStatus("acct", "id-0", "completed");
    await store.deleteSubmission("acct", "id-6");
    assert.equal([await total({}), await total({ popupId: "popup_a" }), await total({ status: "completed" }), await total({ popupId: "popup_b", status: "pending" })], [6, 5, 4, 0]);
  } finally {
    await store.close();
  }
});

const DAY_MS = 86_400_000;

/**
 * A database at schema version 1 holding `count` rows of account "acct" (ids id-0000 on), `perDay`
 * to a UTC day from day 20,000, ten to a millisecond; `columns` gives popup_id and status as SQL
 * over the row's number `i`.
 */
async function version1WithRows(url: string, count: number, perDay: number, columns = { popup: "'popup'", status: "'pending'" }): Promise<void> {
  const client = createClient({ url });
  try {
    await applyVersion1(client);
    await client.execute(`WITH RECURSIVE n (i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < ${count - 1})
      INSERT INTO submissions (account_id, id, popup_id, domain, device, user_agent, status, created_at, data)
      SELECT 'acct', printf('id-%04d', i), ${columns.popup}, '', 'unknown', '', ${columns.status},
        ${20_000 * DAY_MS} + (i / ${perDay}) * ${DAY_MS} + (i % ${perDay}) / 10, '{}' FROM n`);
  } finally {
    client.close();
  }
}

migrations("migration 9 counts per day the rows an older database already has: dated totals and deep offsets follow them", async ({ url }) => {
  // 1,200 rows over 12 days
  await version1WithRows(url, 1200, 100);
  const store = await createLibsqlStore({ url });
  try {
    const list = (query: Partial<SubmissionQuery>) => store.listSubmissions("acct", { order: "desc", limit: 3, offset: 0, ...query });
    assert.is((await list({ createdAfter: 20_002 * DAY_MS - 1, createdBefore: 20_009 * DAY_MS })).total, 700);
    assert.equal((await list({ offset: 1105 })).items.map((s) => s.submissionId), ["id-0094", "id-0093", "id-0092"]);
    assert.equal((await list({ order: "asc", offset: 1105 })).items.map((s) => s.submissionId), ["id-1105", "id-1106", "id-1107"]);
  } finally {
    await store.close();
  }
});

migrations("migration 10 counts per day each filter value's rows an older database already has, and the counts follow later writes", async ({ url }) => {
  // 3,000 rows over 12 days; popups in turn, every third row completed
  await version1WithRows(url, 3000, 250, { popup: "'popup_' || (i % 2)", status: "CASE WHEN i % 3 = 0 THEN 'completed' ELSE 'pending' END" });
  const store = await createLibsqlStore({ url });
  try {
    const ids = async (query: Partial<SubmissionQuery>) =>
      (await store.listSubmissions("acct", { order: "asc", limit: 3, offset: 0, ...query })).items.map((s) => s.submissionId);
    assert.equal(await ids({ popupId: "popup_1", offset: 1100 }), ["id-2201", "id-2203", "id-2205"]);
    assert.equal(await ids({ popupId: "popup_1", order: "desc", offset: 1100 }), ["id-0799", "id-0797", "id-0795"]);
    assert.equal(await ids({ status: "pending", offset: 1500 }), ["id-2251", "id-2252", "id-2254"]);
    // the counts follow a status change and a delete
    await store.setSubmissionStatus("acct", "id-2251", "completed");
    await store.deleteSubmission("acct", "id-2252");
    assert.equal(await ids({ status: "pending", offset: 1500 }), ["id-2254", "id-2255", "id-2257"]);
    assert.equal(await ids({ status: "completed", offset: 1000 }), ["id-2997"]);
  } finally {
    await store.close();
  }
});

migrations("migration 12: without the per-filter indexes and the account's day counts, dated totals and deep offsets still follow the rows and every later write", async ({ url }) => {
  // 1,200 rows over 12 days; popups in turn, every third row completed
  await version1WithRows(url, 1200, 100, { popup: "'popup_' || (i % 2)", status: "CASE WHEN i % 3 = 0 THEN 'completed' ELSE 'pending' END" });
  const store = await createLibsqlStore({ url });
  try {
    const list = (query: Partial<SubmissionQuery>) => store.listSubmissions("acct", { order: "asc", limit: 3, offset: 0, ...query });
    const ids = async (query: Partial<SubmissionQuery>) => (await list(query)).items.map((s) => s.submissionId);
    const week = { createdAfter: 20_002 * DAY_MS - 1, createdBefore: 20_009 * DAY_MS };
    assert.is((await list(week)).total, 700);
    assert.is((await list({ ...week, popupId: "popup_1" })).total, 350);
    assert.equal(await ids({ offset: 1105 }), ["id-1105", "id-1106", "id-1107"]);
    assert.equal(await ids({ popupId: "popup_1", order: "desc", offset: 100 }), ["id-0999", "id-0997", "id-0995"]);
    // later writes: a create inside the week, a status change, a delete
    await store.insertSubmission("acct", {
      submissionId: "id-new", popupId: "popup_1", data: {}, domain: "", userAgent: "", device: "unknown", status: "pending",
      createdAt: new Date(20_003 * DAY_MS + 5).toISOString(),
    });
    await store.setSubmissionStatus("acct", "id-0300", "pending");
    await store.deleteSubmission("acct", "id-0000");
    assert.is((await list(week)).total, 701);
    assert.is((await list({ ...week, status: "pending" })).total, 469);
    // (one row fewer and one more before it)
    assert.equal(await ids({ offset: 1105 }), ["id-1105", "id-1106", "id-1107"]);
    assert.equal(await ids({ order: "desc", offset: 1197 }), ["id-0003", "id-0002", "id-0001"]);
  } finally {
    await store.close();
  }
});

migrations("migration 18 counts per day the rows of each domain, device and status an older database already has, and the counts follow later writes", async ({ url }) => {
  // 1,200 rows over 12 days; popups in turn, every third row completed (233 of the week's 700)
  await version1WithRows(url, 1200, 100, { popup: "'popup_' || (i % 2)", status: "CASE WHEN i % 3 = 0 THEN 'completed' ELSE 'pending' END" });
  const store = await createLibsqlStore({ url });
  try {
    const week = { createdAfter: 20_002 * DAY_MS - 1, createdBefore: 20_009 * DAY_MS };
    const totals = async () => {
      const total = async (filter: object) => (await store.listSubmissions("acct", { ...week, ...filter, order: "asc", limit: 3, offset: 0 })).total;
      // two equality filters without a popup, and all three
      return [await total({ device: "unknown", status: "completed" }), await total({ domain: "", device: "unknown", status: "pending" }), await total({ domain: "", device: "mobile" })];
    };
    assert.equal(await totals(), [233, 467, 0]);
    // later writes: a create inside the week, a status change, a delete
    await store.insertSubmission("acct", {
      submissionId: "id-new", popupId: "popup_1", data: {}, domain: "", userAgent: "", device: "unknown", status: "pending",
      createdAt: new Date(20_003 * DAY_MS + 5).toISOString(),
    });
    await store.setSubmissionStatus("acct", "id-0300", "pending");
    await store.deleteSubmission("acct", "id-0201");
    assert.equal(await totals(), [231, 469, 0]);
  } finally {
    await store.close();
  }
});

migrations("migration 19: an update moves a row's counts per value and day only for the fields whose value or day it changes, and every count follows", async ({ url }) => {
  // a database at schema version 18 holding 40 rows over 4 days, two popups, every third row completed
  const client = createClient({ url });
  try {
    await migrateTo(client, 18);
    await client.execute(`WITH RECURSIVE n (i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < 39)
      INSERT INTO submissions (account_id, id, popup_id, domain, device, user_agent, status, created_at, data, plain_text)
      SELECT 'acct', printf('id-%02d', i), 'popup_' || (i % 2), 'example.com', 'mobile', '', CASE WHEN i % 3 = 0 THEN 'completed' ELSE 'pending' END,
        ${20_000 * DAY_MS} + (i / 10) * ${DAY_MS} + i, '{}', 1 FROM n`);
  } finally {
    client.close();
  }
  const store = await createLibsqlStore({ url });
  try {
    await store.setSubmissionStatus("acct", "id-01", "completed");
    await store.deleteSubmission("acct", "id-02");
  } finally {
    await store.close();
  }
  assert.equal(await versions(url), MIGRATIONS.map((_, i) => i + 1));

  const db = createClient({ url });
  try {
    // which fields' counts per value and day each update writes, seen by this connection's own triggers
    await db.execute("CREATE TEMP TABLE written (field TEXT NOT NULL)");
    await db.execute("CREATE TEMP TRIGGER value_day_updated AFTER UPDATE ON submission_value_days BEGIN INSERT INTO written VALUES (NEW.field); END");
    await db.execute("CREATE TEMP TRIGGER value_day_inserted AFTER INSERT ON submission_value_days BEGIN INSERT INTO written VALUES (NEW.field); END");
    const writes = async (sql: string) => {
      await db.execute("DELETE FROM written");
      await db.execute(sql);
      return (await db.execute("SELECT DISTINCT field FROM written ORDER BY field")).rows.map((row) => String(row.field));
    };
    assert.equal(await writes("UPDATE submissions SET status = 'completed' WHERE id = 'id-04'"), ["status"]);
    assert.equal(await writes("UPDATE submissions SET status = 'completed' WHERE id = 'id-03'"), [], "the status it has already");
    assert.equal(await writes("UPDATE submissions SET popup_id = 'popup_9', device = 'tablet' WHERE id = 'id-05'"), ["device", "popup_id"]);
    assert.equal(await writes("UPDATE submissions SET created_at = created_at + 1 WHERE id = 'id-06'"), [], "a time on the same day");
    assert.equal(await writes(`UPDATE submissions SET created_at = created_at + ${DAY_MS} WHERE id = 'id-07'`), ["device", "domain", "popup_id", "status"]);
    assert.equal(await writes("UPDATE submissions SET account_id = 'other' WHERE id = 'id-08'"), ["device", "domain", "popup_id", "status"]);
    await db.execute("UPDATE submissions SET domain = 'example.org', status = 'pending' WHERE id IN ('id-09', 'id-10', 'id-11')");
    await db.execute("DELETE FROM submissions WHERE id = 'id-12'");
    // every count per value and day is its rows' count
    const kept = await db.execute("SELECT account_id, field, day, value, n FROM submission_value_days WHERE n != 0 ORDER BY 1, 2, 3, 4");
    const counted = await db.execute(Object.values(EQUALITY_COLUMNS).map((column) =>
      `SELECT account_id, '${column}' AS field, ${dayOf("created_at")} AS day, ${column} AS value, COUNT(*) AS n FROM submissions GROUP BY 1, 2, 3, 4`).join(" UNION ALL ") + " ORDER BY 1, 2, 3, 4");
    assert.equal(kept.rows.map((row) => Object.values(row)), counted.rows.map((row) => Object.values(row)));
    assert.ok(kept.rows.length > 20);
  } finally {
    db.close();
  }
});

migrations("migration 20 numbers the endpoints and keeps every delivery, lease and place in the log; a number is never given again", async ({ url }) => {
  // a database at schema version 19: an enabled endpoint holding a range lease with a delivered and
  // a failed-and-due first attempt before it, and a disabled endpoint of another account
  const now = Date.now();
  const eventId = (position: number) => `evt_${position.toString(16).padStart(32, "0")}`;
  const client = createClient({ url });
  try {
    await migrateTo(client, 19);
    for (const [position, account] of [[1, "acct"], [2, "acct"], [3, "acct"], [4, "acct"], [5, "other"]] as const) {
      await client.execute({
        sql: `INSERT INTO events (position, account_id, type, at, popup_id, submission_id, event) VALUES (?, ?, 'submission.deleted', ?, 'popup', ?, ?)`,
        args: [position, account, now, `id-${position}`, JSON.stringify({
          id: eventId(position), type: "submission.deleted", timestamp: new Date(now).toISOString(), data: { submissionId: `id-${position}`, popupId: "popup", reason: "api" },
        })],
      });
    }
    const webhook = `INSERT INTO webhooks (account_id, id, url, types, popup_id, description, created_at, disabled_at, secrets, previous_secret_expires_at,
      failing_since, log_position, lease_owner, lease_until, lease_claim, lease_last, lease_at) VALUES (?, ?, 'https://hooks.example.com/', NULL, NULL, NULL,
      '2026-01-01T00:00:00.000Z', ?, '["whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"]', NULL, NULL, ?, ?, ?, ?, ?, ?)`;
    await client.execute({ sql: webhook, args: ["other", "wh_b", "2026-02-01T00:00:00.000Z", 5, null, null, null, null, null] });
    await client.execute({ sql: webhook, args: ["acct", "wh_a", null, 2, "o", now + 60_000, "c", 3, now] });
    const delivery = `INSERT INTO webhook_deliveries (account_id, webhook_id, position, event_id, event_type, status, attempts, first_attempt_at, last_attempt_at,
      next_attempt_at, last_status_code, last_error, last_duration_ms) VALUES (?, ?, ?, ?, 'submission.deleted', ?, ?, ?, ?, ?, ?, ?, 5)`;
    await client.execute({ sql: delivery, args: ["acct", "wh_a", 1, eventId(1), "succeeded", 1, now, now, null, 204, null] });
    await client.execute({ sql: delivery, args: ["acct", "wh_a", 2, eventId(2), "pending", 1, now, now, now - 1, 500, "HTTP 500"] });
    await client.execute({ sql: delivery, args: ["other", "wh_b", 5, eventId(5), "failed", 3, now, now, null, 410, "HTTP 410"] });
  } finally {
    client.close();
  }
  const store = await createLibsqlStore({ url });
  try {
    assert.equal(await versions(url), MIGRATIONS.map((_, i) => i + 1));
    const listed = async (accountId: string, webhookId: string) =>
      (await store.listDeliveries(accountId, webhookId, { limit: 10 })).deliveries.map((d) => [d.eventId, d.status, d.attempts, d.lastStatusCode, d.nextAttemptAt]);
    // the range's first attempt (event 3) listed as pending, event 4 not yet taken in
    const at = (time: number) => new Date(time).toISOString();
    assert.equal(await listed("acct", "wh_a"), [[eventId(3), "pending", 0, null, at(now)], [eventId(2), "pending", 1, 500, at(now - 1)], [eventId(1), "succeeded", 1, 204, null]]);
    assert.equal(await listed("other", "wh_b"), [[eventId(5), "failed", 3, 410, null]]);
    assert.is((await store.getWebhook("other", "wh_b"))?.disabledAt, "2026-02-01T00:00:00.000Z");
    // the range is still leased by its owner: another claims only the due retry
    const claimed = await store.claimDeliveries({ now, limit: 10, leaseMs: 60_000, owner: "o2" });
    assert.equal(claimed.map((d) => [d.accountId, d.webhook.webhookId, d.eventId, d.attempts]), [["acct", "wh_a", eventId(2), 1]]);
    const attempt = { accountId: "acct", webhookId: "wh_a", owner: "o", at: now, durationMs: 1, statusCode: 200, error: null, status: "succeeded" as const, nextAttemptAt: null };
    assert.equal(await store.recordDeliveryAttempts!([{ ...attempt, position: 3 }, { ...attempt, position: 2 }]), [true, false], "the lease holder's outcomes alone");
    assert.ok(await store.retryDelivery("acct", "wh_a", eventId(1), now));
    assert.equal(await listed("acct", "wh_a"), [[eventId(3), "succeeded", 1, 200, null], [eventId(2), "pending", 1, 500, at(now - 1)], [eventId(1), "pending", 1, 204, at(now)]]);
    // the newest endpoint deleted and another added: its number is new, and it has no deliveries
    assert.ok(await store.deleteWebhook("acct", "wh_a"));
    await store.insertWebhook("acct", {
      webhookId: "wh_c", url: "https://hooks.example.com/", types: null, popupId: null, description: null, createdAt: new Date(now).toISOString(), disabledAt: null,
      secrets: ["whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"], previousSecretExpiresAt: null, failingSince: null,
    });
    assert.equal(await listed("acct", "wh_c"), []);
  } finally {
    await store.close();
  }
  const db = createClient({ url });
  try {
    const { rows } = await db.execute("SELECT id, endpoint FROM webhooks ORDER BY endpoint");
    assert.equal(rows.map((row) => [row.id, Number(row.endpoint)]), [["wh_b", 1], ["wh_c", 3]]);
  } finally {
    db.close();
  }
});

migrations("migration 21 rebuilds the popup's index with each row's status: lists by popup and status find the rows an older database has, and follow a status change", async ({ url }) => {
  // a database at schema version 20: 300 rows a second apart, popups in turn, every third row completed
  const client = createClient({ url });
  try {
    await migrateTo(client, 20);
    await client.execute(`WITH RECURSIVE n (i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < 299)
      INSERT INTO submissions (account_id, id, popup_id, domain, device, user_agent, status, created_at, data)
      SELECT 'acct', printf('id-%04d', i), 'popup_' || (i % 2), '', 'unknown', '', CASE WHEN i % 3 = 0 THEN 'completed' ELSE 'pending' END,
        ${20_000 * DAY_MS} + i * 1000, '{}' FROM n`);
  } finally {
    client.close();
  }
  const store = await createLibsqlStore({ url });
  const expected = (popup: number, status: "pending" | "completed", order: "asc" | "desc", moved?: number) => {
    const ids: string[] = [];
    for (let i = 0; i < 300; i++) {
      const completed = i % 3 === 0 ? i !== moved : i === moved;
      if (i % 2 === popup && completed === (status === "completed")) ids.push(`id-${String(i).padStart(4, "0")}`);
    }
    return order === "asc" ? ids.slice(0, 10) : ids.reverse().slice(0, 10);
  };
  const listed = async (popup: number, status: "pending" | "completed", order: "asc" | "desc") => {
    const page = await store.listSubmissions("acct", { popupId: `popup_${popup}`, status, order, limit: 10, offset: 0 });
    return [page.total, page.items.map((s) => s.submissionId)];
  };
  try {
    assert.equal(await versions(url), MIGRATIONS.map((_, i) => i + 1));
    for (const order of ["asc", "desc"] as const) {
      assert.equal(await listed(0, "completed", order), [50, expected(0, "completed", order)]);
      assert.equal(await listed(1, "pending", order), [100, expected(1, "pending", order)]);
    }
    // the newest of popup_0's pending leads completed: its entry in the index changes with the row
    await store.setSubmissionStatus("acct", "id-0298", "completed");
    assert.equal(await listed(0, "completed", "desc"), [51, expected(0, "completed", "desc", 298)]);
    assert.equal(await listed(0, "pending", "desc"), [99, expected(0, "pending", "desc", 298)]);
  } finally {
    await store.close();
  }
  const db = createClient({ url });
  try {
    const columns = await db.execute("SELECT name FROM pragma_index_info('submissions_by_popup') ORDER BY seqno");
    assert.equal(columns.rows.map((row) => row.name), ["account_id", "popup_id", "created_at", "id", "status"]);
    assert.equal((await db.execute("PRAGMA integrity_check")).rows.map((row) => Object.values(row)[0]), ["ok"]);
  } finally {
    db.close();
  }
});

migrations("migration 22 counts positions per account: cursors, horizons and endpoints' places held from before go on without a gap or a repeat", async ({ url }) => {
  // a database at schema version 21: the log of two accounts interleaved (positions 2 to 9: acct 2,
  // 4, 7; other 3, 5, 6, 8, 9), acct's event 1 pruned, and an endpoint of acct that has taken in
  // and delivered its events through 4
  const now = Date.now();
  const eventId = (position: number) => `evt_${position.toString(16).padStart(32, "0")}`;
  const accountOf = (position: number) => ([2, 4, 7].includes(position) ? "acct" : "other");
  const client = createClient({ url });
  try {
    await migrateTo(client, 21);
    for (let position = 2; position <= 9; position++) {
      await client.execute({
        sql: `INSERT INTO events (position, account_id, type, at, popup_id, submission_id, event) VALUES (?, ?, 'submission.deleted', ?, 'popup', ?, ?)`,
        args: [position, accountOf(position), now, `id-${position}`, JSON.stringify({
          id: eventId(position), type: "submission.deleted", timestamp: new Date(now).toISOString(), data: { submissionId: `id-${position}`, popupId: "popup", reason: "api" },
        })],
      });
    }
    await client.execute("INSERT INTO event_horizons (account_id, pruned_through) VALUES ('acct', 1)");
    await client.execute(`INSERT INTO webhooks (account_id, id, url, created_at, secrets, log_position)
      VALUES ('acct', 'wh_a', 'https://hooks.example.com/', '2026-01-01T00:00:00.000Z', '["whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"]', 4)`);
    for (const position of [2, 4]) {
      await client.execute({
        sql: `INSERT INTO webhook_deliveries (endpoint, position, event_id, event_type, status, attempts, first_attempt_at, last_attempt_at, last_status_code)
              VALUES (1, ?, ?, 'submission.deleted', 'succeeded', 1, ?, ?, 204)`,
        args: [position, eventId(position), now, now],
      });
    }
  } finally {
    client.close();
  }
  const store = await createLibsqlStore({ url });
  const read = async (accountId: string, after?: number) => {
    const page = await store.readEvents(accountId, { limit: 100, after });
    return page.expired ? "expired" : { ids: page.events.map((e) => e.id), cursor: page.cursor };
  };
  const row = (i: number) => ({
    submissionId: `0193f5c2-7b8e-7cc1-9a1e-4f1f9d6f0c${String(i).padStart(2, "0")}`, popupId: "popup", data: {}, domain: "", userAgent: "",
    device: "unknown" as const, status: "pending" as const, createdAt: "2025-07-12T10:30:00.000Z",
  });
  try {
    assert.equal(await versions(url), MIGRATIONS.map((_, i) => i + 1));
    // every cursor an account held reads on from the same event as before
    assert.equal(await read("acct"), { ids: [eventId(2), eventId(4), eventId(7)], cursor: 7 });
    assert.equal(await read("acct", 4), { ids: [eventId(7)], cursor: 7 });
    assert.equal(await read("acct", 0), "expired", "a cursor from before the horizon");
    assert.equal(await read("other", 5), { ids: [eventId(6), eventId(8), eventId(9)], cursor: 9 });
    // each account's next events follow its own newest: acct's first takes 8, which was another account's
    await store.insertSubmission("acct", row(1));
    await store.insertSubmission("other", row(2));
    await store.importSubmissions("other", [row(3), row(4)]);
    await store.insertSubmission("acct", row(5));
    const acct = await read("acct", 7);
    assert.ok(acct !== "expired");
    assert.is(acct.ids.length, 2);
    assert.is(acct.cursor, 9, "two events of its own moved acct's cursor by two");
    assert.equal(await read("acct", 8), { ids: acct.ids.slice(1), cursor: 9 });
    const other = await read("other", 9);
    assert.ok(other !== "expired");
    assert.is(other.ids.length, 3);
    assert.is(other.cursor, 12);
    // the endpoint goes on from its place: acct's 7 and its two new events, each once
    const claimed = await store.claimDeliveries({ now, limit: 10, leaseMs: 60_000, owner: "o" });
    assert.equal(claimed.map((d) => [d.position, d.eventId]), [[7, eventId(7)], [8, acct.ids[0]], [9, acct.ids[1]]]);
    for (const delivery of claimed) {
      assert.ok(await store.recordDeliveryAttempt({
        accountId: "acct", webhookId: "wh_a", position: delivery.position, owner: "o", at: now, durationMs: 1, statusCode: 204, error: null,
        status: "succeeded", nextAttemptAt: null,
      }));
    }
    assert.equal(await store.claimDeliveries({ now, limit: 10, leaseMs: 60_000, owner: "o" }), []);
    const first = await store.listDeliveries("acct", "wh_a", { limit: 2 });
    assert.equal([first.deliveries.map((d) => d.eventId), first.cursor], [[acct.ids[1], acct.ids[0]], 8]);
    const rest = await store.listDeliveries("acct", "wh_a", { limit: 2, after: first.cursor! });
    assert.equal([rest.deliveries.map((d) => d.eventId), rest.cursor], [[eventId(7), eventId(4)], 4]);
    // pruning records each account's horizon as its own position
    assert.is(await store.pruneEvents(Date.now() + 60_000), 8 + 2 + 3);
    assert.equal(await read("acct", 8), "expired");
    assert.equal(await read("acct", 9), { ids: [], cursor: 9 });
    assert.equal(await read("other", 12), { ids: [], cursor: 12 });
    assert.equal(await store.listDeliveries("acct", "wh_a", { limit: 10 }), { deliveries: [], cursor: null });
    await store.insertSubmission("acct", row(6));
    assert.equal((await read("acct", 9) as { cursor: number }).cursor, 10, "numbered on past the horizon");
  } finally {
    await store.close();
  }
});

migrations("migration 5 indexes the emails an older database already has", async ({ url }) => {
  const client = createClient({ url });
  try {
    await applyVersion1(client);
    const insert = "INSERT INTO submissions (account_id, id, popup_id, domain, device, user_agent, status, created_at, data) VALUES (?, ?, 'popup', '', 'unknown', '', 'pending', 0, ?)";
    await client.execute({ sql: insert, args: ["acct", "id-1", '{"email":"Old@Example.com"}'] });
    await client.execute({ sql: insert, args: ["acct", "id-2", '{"email":"other@example.com","phone":"1"}'] });
    await client.execute({ sql: insert, args: ["else", "id-1", '{"email":"old@example.com"}'] });
  } finally {
    client.close();
  }
  const store = await createLibsqlStore({ url });
  try {
    assert.equal(await store.findSubmissionsByIdentifier("acct", "email", "old@EXAMPLE.com"), ["id-1"]);
  } finally {
    await store.close();
  }
});

migrations("changing identifyingFields re-indexes at open: an added field finds existing rows, a removed one is dropped", async ({ url }) => {
  const first = await createLibsqlStore({ url });
  const row = (id: string, data: Record<string, string>) => ({
    submissionId: id, popupId: "p", data, domain: "", userAgent: "", device: "unknown" as const, status: "pending" as const, createdAt: "2025-07-12T10:30:00.000Z",
  });
  await first.insertSubmission("acct", row("0193f5c2-7b8e-7cc1-9a1e-4f1f9d6f0c11", { email: "a@example.com", phone: "+1 555" }));
  await first.close();
  const second = await createLibsqlStore({ url, identifyingFields: ["phone"] });
  try {
    assert.equal(second.identifyingFields, ["phone"]);
    assert.equal(await second.findSubmissionsByIdentifier("acct", "phone", "+1 555"), ["0193f5c2-7b8e-7cc1-9a1e-4f1f9d6f0c11"]);
    assert.equal(await second.findSubmissionsByIdentifier("acct", "email", "a@example.com"), []);
  } finally {
    await second.close();
  }
  const third = await createLibsqlStore({ url });
  try {
    assert.equal(third.identifyingFields, ["phone"], "a store opened without the option keeps the database's fields");
  } finally {
    await third.close();
  }
});

migrations.run();

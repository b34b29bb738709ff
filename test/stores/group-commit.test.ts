/**
 * Group commit (src/stores/sql/group-commit.ts): concurrent creates share one transaction, each
 * is answered only after that commit, and a create that fails does not take the others with it.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { openLibsqlFile } from "../../src/stores/libsql/file.ts";
import type { SqlDriver } from "../../src/stores/sql/driver.ts";
import { createSqlStore } from "../../src/stores/sql/store.ts";
import { StoreUnavailable } from "../../src/store.ts";
import type { Submission } from "../../src/submission.ts";
import { within } from "../support/within.ts";

const test = suite("SQL store: group commit");

/** A store over :memory: whose driver records each write batch and when it committed. */
async function recordingStore() {
  const connection = openLibsqlFile(":memory:");
  const commits: number[] = [];
  const driver: SqlDriver = {
    execute: (statement) => connection.driver.execute(statement),
    batch: async (statements, mode) => {
      const results = await connection.driver.batch(statements, mode);
      if (mode === "write") commits.push(statements.length);
      return results;
    },
  };
  const store = await createSqlStore(driver, connection.close);
  commits.length = 0; // migrations
  return { store, commits, driver };
}

/**
 * Statements a group of creates that share their counts adds (group-counts.ts): the count
 * trigger set aside, an upsert per table of counts, the trigger back.
 */
const COUNTED_TOGETHER = 6;

/**
 * Statements of a group commit of `creates` creates that each take three alone (row, data keys,
 * event): their rows together, eleven to a statement, each one's data keys, their events
 * together, twelve to a statement (group-creates.ts), and the counts' statements when the group
 * keeps them.
 */
const grouped = (creates: number, counted: boolean) => Math.ceil(creates / 11) + creates + Math.ceil(creates / 12) + (counted ? COUNTED_TOGETHER : 0);

// A data key of its own for each row: a create whose keys the store has seen committed leaves
// out the key list's statement, and these tests count three statements per create.
const row = (i: number): Submission => ({
  submissionId: `00000000-0000-7000-8000-${String(i).padStart(12, "0")}`,
  popupId: "popup",
  data: { i, [`key${i}`]: true },
  domain: "example.com",
  userAgent: "agent",
  device: "desktop",
  status: "pending",
  createdAt: new Date(Date.UTC(2025, 0, 1) + i).toISOString(),
});

test("concurrent creates share one commit, and each is answered after it", async () => {
  const { store, commits, driver } = await recordingStore();
  try {
    const answered: number[] = [];
    await Promise.all(Array.from({ length: 20 }, (_, i) => store.insertSubmission("acct", row(i)).then(() => answered.push(commits.length))));
    assert.equal(commits, [grouped(20, true)], "one transaction of 20 rows in two statements, their 20 data-key statements and their events in two, counted together");
    assert.ok(answered.every((seen) => seen === 1), "no create was answered before the commit");
    assert.is((await store.listSubmissions("acct", { order: "asc", limit: 1, offset: 0 })).total, 20);
    // Each event written with the others names its own row, in the order of the creates.
    const events = await driver.execute({
      sql: `SELECT submissions.data ->> 'i' AS i FROM events JOIN submissions ON submissions.rowid = events.submission_rowid
            AND submissions.account_id = events.account_id AND submissions.id = events.submission_id ORDER BY events.position`,
    });
    assert.equal(events.rows.map((r) => Number(r.i)), Array.from({ length: 20 }, (_, i) => i));
    const feed = await store.readEvents("acct", { limit: 100 });
    assert.ok(!feed.expired);
    assert.equal(feed.events.map((event) => (event.data as Submission).submissionId), Array.from({ length: 20 }, (_, i) => row(i).submissionId));
  } finally {
    await store.close();
  }
});

test("rate-limit counts that arrive together share one commit, and each gets the bucket's count with its own hit", async () => {
  const { store, commits } = await recordingStore();
  try {
    const window = [Date.UTC(2025, 0, 1), Date.UTC(2025, 0, 1) + 60_000] as const;
    const counts = await Promise.all([
      ...Array.from({ length: 4 }, () => store.countRateLimitHit("a", ...window)),
      store.countRateLimitHit("b", ...window),
    ]);
    assert.equal(commits, [10], "one transaction of five counts, each a cleanup and an upsert");
    assert.equal(counts, [1, 2, 3, 4, 1]);
    assert.is(await store.countRateLimitHit("a", ...window), 5);
  } finally {
    await store.close();
  }
});

test("a create that fails in a group fails alone: the others are stored", async () => {
  const { store } = await recordingStore();
  try {
    await store.insertSubmission("acct", row(3));
    const outcomes = await Promise.all(
      [1, 2, 3, 4].map((i) => store.insertSubmission("acct", row(i)).then(() => "stored", () => "refused")),
    );
    assert.equal(outcomes, ["stored", "stored", "refused", "stored"]);
    const page = await store.listSubmissions("acct", { order: "asc", limit: 10, offset: 0 });
    assert.equal(page.items.map((s) => s.data.i), [1, 2, 3, 4]);
    assert.is(page.total, 4);
  } finally {
    await store.close();
  }
});

test("a group's counts are kept once for the group, exact at each commit, also when a create of a group fails and when one is idempotent", async () => {
  const { store, commits, driver } = await recordingStore();
  const day = Date.UTC(2025, 0, 1);
  // Two accounts, two popups, two days, a completed one: creates that share some counts.
  const create = (i: number, id = i) => {
    const s = row(id);
    // Every third has an email: the identifier index's trigger runs for each row of a group too.
    const data = i % 3 === 0 ? { ...s.data, email: `Person${id}@Example.com` } : s.data;
    return { account: `acct_${i % 2}`, s: { ...s, data, popupId: `popup_${(i >> 1) % 2}`, status: i === 5 ? "completed" as const : s.status, createdAt: new Date(day + ((i >> 2) % 2) * 86_400_000 + i).toISOString() } };
  };
  const insert = ({ account, s }: ReturnType<typeof create>) => store.insertSubmission(account, s).then(() => "stored", () => "refused");
  /** The tables of counts, and the same counts made from the rows. */
  const counts = async () => {
    const read = async (sql: string) => (await driver.execute({ sql })).rows.map((r) => JSON.stringify(Object.values(r))).sort();
    const day = "((created_at - ((created_at % 86400000) + 86400000) % 86400000) / 86400000)";
    return {
      kept: [
        await read("SELECT account_id, popup_id, domain, device, status, n FROM submission_counts WHERE n > 0"),
        await read("SELECT account_id, popup_id, domain, device, status, day, n FROM submission_day_counts WHERE n > 0"),
        await read("SELECT account_id, domain, device, status, day, n FROM submission_day_counts_all_popups WHERE n > 0"),
        await read("SELECT account_id, field, day, value, n FROM submission_value_days WHERE n > 0"),
        await read("SELECT account_id, submission_id FROM submission_identifiers"),
      ],
      fromRows: [
        await read("SELECT account_id, popup_id, domain, device, status, COUNT(*) FROM submissions GROUP BY 1, 2, 3, 4, 5"),
        await read(`SELECT account_id, popup_id, domain, device, status, ${day}, COUNT(*) FROM submissions GROUP BY 1, 2, 3, 4, 5, 6`),
        await read(`SELECT account_id, domain, device, status, ${day}, COUNT(*) FROM submissions GROUP BY 1, 2, 3, 4, 5`),
        await read(["popup_id", "domain", "device", "status"].map((column) => `SELECT account_id, '${column}', ${day}, ${column}, COUNT(*) FROM submissions GROUP BY 1, 3, 4`).join(" UNION ALL ")),
        await read("SELECT account_id, id FROM submissions WHERE data ->> 'email' IS NOT NULL"),
      ],
    };
  };
  try {
    // 16 creates over 9 combinations of account, popup, status and day: counted together.
    const first = await Promise.all(Array.from({ length: 16 }, (_, i) => insert(create(i))));
    assert.ok(first.every((outcome) => outcome === "stored"));
    // (the 24 counts per value and day take two upserts: 20 rows per statement, as D1 allows 100 bound values)
    assert.equal(commits, [grouped(16, true) + 1]);
    let now = await counts();
    assert.equal(now.kept, now.fromRows);
    assert.is(now.kept[1]!.length, 9, "nine combinations of account, popup, status and day");
    // A group whose create 3 repeats a stored id: the group's transaction fails, each create runs alone.
    commits.length = 0;
    const second = await Promise.all(Array.from({ length: 8 }, (_, i) => insert(create(i, i === 3 ? 7 : 100 + i))));
    assert.equal(second, ["stored", "stored", "stored", "refused", "stored", "stored", "stored", "stored"]);
    assert.is(commits.length, 7, "each create ran again alone, and the refused one committed nothing");
    now = await counts();
    assert.equal(now.kept, now.fromRows);
    // With an idempotent create in it, a group leaves the counts to the trigger.
    commits.length = 0;
    const third = await Promise.all([
      ...Array.from({ length: 8 }, (_, i) => insert(create(i, 200 + i))),
      store.insertSubmissionOnce("acct_0", create(0, 300).s, { key: "k", fingerprint: "f", expiresAt: Date.now() + 60_000 }, Date.now()),
    ]);
    assert.equal(third.slice(0, 8), Array(8).fill("stored"));
    assert.equal(commits, [8 * 3 + 6]);
    now = await counts();
    assert.equal(now.kept, now.fromRows);
    assert.is((await driver.execute({ sql: "SELECT COUNT(*) AS n FROM submission_import" })).rows[0]!.n, 0);
    // Every stored row has its one created event, in the order of the rows.
    const events = await driver.execute({ sql: "SELECT submission_id FROM events WHERE type = 'submission.created' ORDER BY position" });
    const rows = await driver.execute({ sql: "SELECT id FROM submissions ORDER BY rowid" });
    assert.equal(events.rows.map((r) => r.submission_id), rows.rows.map((r) => r.id));
  } finally {
    await store.close();
  }
});

test("a storage fault fails the whole group at once, without a try per create", async () => {
  const connection = openLibsqlFile(":memory:");
  let writes = 0;
  let failing = false;
  const driver: SqlDriver = {
    execute: (statement) => connection.driver.execute(statement),
    batch: async (statements, mode) => {
      if (mode === "write" && failing) {
        writes++;
        throw new StoreUnavailable("busy", "The database is locked by another process; try again shortly");
      }
      return connection.driver.batch(statements, mode);
    },
  };
  const store = await createSqlStore(driver, connection.close);
  try {
    failing = true;
    const outcomes = await Promise.all([1, 2, 3, 4].map((i) => store.insertSubmission("acct", row(i)).then(() => undefined, (error: unknown) => error)));
    assert.ok(outcomes.every((error) => error instanceof StoreUnavailable && error.kind === "busy"));
    assert.is(writes, 1);
  } finally {
    await store.close();
  }
});

test("creates made one after another are not held back for a group", async () => {
  const { store, commits } = await recordingStore();
  try {
    for (let i = 0; i < 3; i++) await store.insertSubmission("acct", row(i));
    assert.equal(commits, [3, 3, 3]);
  } finally {
    await store.close();
  }
});

test("after a commit, the next group waits for the writers it answered: clients that write again a few turns later share every commit", async () => {
  const { store, commits } = await recordingStore();
  try {
    // Ten clients, each sending its next create a turn or two of the event loop after its
    // answer, as an HTTP client's next request arrives: half of them a turn after the others.
    await Promise.all(Array.from({ length: 10 }, async (_, client) => {
      for (let round = 0; round < 3; round++) {
        await store.insertSubmission("acct", row(round * 10 + client));
        for (let turn = 0; turn <= client % 2; turn++) await new Promise((resolve) => setImmediate(resolve));
      }
    }));
    assert.equal(commits, Array(3).fill(grouped(10, true)), "each commit holds one create of every client");
  } finally {
    await store.close();
  }
});

test("a writer that does not come back does not hold the next group: a lone create commits by itself", async () => {
  const { store, commits } = await recordingStore();
  try {
    await Promise.all([store.insertSubmission("acct", row(0)), store.insertSubmission("acct", row(1))]);
    // The group after that commit waits for two writers; only one comes, and no other write follows.
    await within(store.insertSubmission("acct", row(2)), 10_000, "the lone create");
    assert.equal(commits, [grouped(2, false), 3]);
  } finally {
    await store.close();
  }
});

test("creates that arrive while a commit is in flight wait for it, then share the next one", async () => {
  // A file, whose commit runs off the event loop; the first commit's answer is held back until
  // the later creates have arrived, so they arrive while it is in flight whatever the disk's speed.
  const dir = mkdtempSync(join(tmpdir(), "formsink-group-"));
  const connection = openLibsqlFile(join(dir, "group.db"));
  const commits: number[] = [];
  let release!: () => void;
  const held = new Promise<void>((resolve) => (release = resolve));
  let holding = false;
  const driver: SqlDriver = {
    execute: (statement) => connection.driver.execute(statement),
    batch: async (statements, mode) => {
      const results = await connection.driver.batch(statements, mode);
      if (mode === "write") commits.push(statements.length);
      if (mode === "write" && holding) {
        holding = false;
        await held;
      }
      return results;
    },
  };
  const store = await createSqlStore(driver, connection.close);
  try {
    commits.length = 0; // migrations
    holding = true;
    const first = store.insertSubmission("acct", row(0));
    while (commits.length === 0) await new Promise((resolve) => setTimeout(resolve, 1));
    const later = Promise.all([1, 2, 3, 4, 5].map((i) => store.insertSubmission("acct", row(i))));
    // Several turns of the event loop pass with the first commit still unanswered.
    for (let turn = 0; turn < 5; turn++) await new Promise((resolve) => setImmediate(resolve));
    assert.equal(commits, [3], "no second commit while the first is in flight");
    release();
    await Promise.all([first, later]);
    assert.equal(commits, [3, grouped(5, true)], "the five later creates went in one commit, after the first");
    assert.is((await store.listSubmissions("acct", { order: "asc", limit: 1, offset: 0 })).total, 6);
  } finally {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

test.run();

/**
 * The file store's WAL: kept short under a stream of group commits with reads between them (by
 * SQLite's automatic checkpoint in the commits, src/stores/libsql/file.ts), held back only while
 * a reader keeps an old snapshot, and emptied into the database file at close.
 *
 * The WAL's state is read from its wal-index (the `-shm` file), whose header SQLite documents
 * (https://sqlite.org/walformat.html): the frames in the WAL (`mxFrame`) and how many of them
 * are copied into the database file (`nBackfill`).
 */
import Database from "libsql";
import { closeSync, copyFileSync, mkdtempSync, openSync, readSync, rmSync, statSync } from "node:fs";
import { endianness, tmpdir } from "node:os";
import { join } from "node:path";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import type { CompleteStore } from "../../src/store.ts";
import { openLibsqlFile } from "../../src/stores/libsql/file.ts";
import { createLibsqlStore } from "../../src/stores/libsql/index.ts";
import { createSqlStore } from "../../src/stores/sql/store.ts";
import type { Submission } from "../../src/submission.ts";

const test = suite("libSQL file: WAL checkpoints");

const ACCOUNT = "a";
/** Frames not copied, and frames in the WAL: SQLite checkpoints at 1000, once a commit passes it. */
const MOST_NOT_COPIED = 2000;
const LONGEST_WAL = 2000;

function walIndex(path: string): { frames: number; copied: number } {
  const header = Buffer.alloc(136);
  const fd = openSync(`${path}-shm`, "r");
  try {
    readSync(fd, header, 0, header.length, 0);
  } finally {
    closeSync(fd);
  }
  const read = (offset: number) => (endianness() === "LE" ? header.readUInt32LE(offset) : header.readUInt32BE(offset));
  return { frames: read(16), copied: read(96) };
}

let created = 0;
const submission = (): Submission => {
  const n = created++;
  return {
    submissionId: `00000000-0000-7000-8000-${n.toString(16).padStart(12, "0")}`,
    popupId: `popup-${n % 7}`,
    data: { email: `visitor${n}@example.com`, note: "x".repeat(200) },
    domain: "example.com",
    userAgent: "agent",
    device: n % 2 ? "desktop" : "mobile",
    status: "pending",
    createdAt: new Date(Date.UTC(2025, 0, 1) + n * 1000).toISOString(),
  };
};

/** Groups of 10 concurrent creates (one group commit each), a list after each as a server's reads come between. */
async function createInGroups(store: CompleteStore, groups: number, after: (group: number) => void) {
  for (let group = 0; group < groups; group++) {
    await Promise.all(Array.from({ length: 10 }, () => store.insertSubmission(ACCOUNT, submission())));
    after(group);
    await store.listSubmissions(ACCOUNT, { popupId: "popup-1", order: "desc", limit: 10, offset: 0 });
  }
}

async function withFile(run: (path: string) => Promise<void>) {
  const dir = mkdtempSync(join(tmpdir(), "formsink-wal-"));
  try {
    await run(join(dir, "wal.db"));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const total = async (store: CompleteStore) => (await store.listSubmissions(ACCOUNT, { order: "desc", limit: 1, offset: 0 })).total;

/** The file store as a server opens it, and on one synchronous connection, as `formsink serve`'s webhook thread does. */
const OPENINGS: [string, (path: string) => Promise<CompleteStore>][] = [
  ["the store's writer", (path) => createLibsqlStore({ url: `file:${path}` })],
  [
    "a synchronous connection",
    (path) => {
      const connection = openLibsqlFile(path, { synchronous: true });
      return createSqlStore(connection.driver, connection.close);
    },
  ],
];

for (const [name, open] of OPENINGS) {
  test(`${name}: the WAL stays short under a stream of group commits`, () =>
    withFile(async (path) => {
      const store = await open(path);
      try {
        let mostNotCopied = 0;
        let longest = 0;
        let startedOver = 0;
        let before = walIndex(path).frames;
        await createInGroups(store, 200, () => {
          const { frames, copied } = walIndex(path);
          mostNotCopied = Math.max(mostNotCopied, frames - copied);
          longest = Math.max(longest, frames);
          if (frames < before) startedOver++;
          before = frames;
        });
        assert.ok(mostNotCopied <= MOST_NOT_COPIED, `${mostNotCopied} frames not copied`);
        assert.ok(longest <= LONGEST_WAL, `a WAL of ${longest} frames`);
        assert.ok(startedOver >= 1, "the WAL never started over");
      } finally {
        await store.close();
      }
    }),
  );
}

test("a reader on an old snapshot holds the checkpoints back while it reads; after it, they catch up and the WAL starts over", () =>
  withFile(async (path) => {
    const store = await createLibsqlStore({ url: `file:${path}` });
    const reader = new Database(path);
    const first = created;
    try {
      await createInGroups(store, 5, () => {});
      reader.exec("BEGIN");
      const seen = (reader.prepare("SELECT count(*) AS n FROM submissions").get() as { n: number }).n;
      const snapshot = walIndex(path).frames;
      await createInGroups(store, 150, () => {
        // Nothing past the reader's snapshot is copied into the file while it reads.
        assert.ok(walIndex(path).copied <= snapshot, "copied past the reader's snapshot");
      });
      const { frames: whileHeld, copied: copiedWhileHeld } = walIndex(path);
      assert.ok(whileHeld - copiedWhileHeld > MOST_NOT_COPIED, `${whileHeld - copiedWhileHeld} frames not copied behind the reader`);
      assert.is((reader.prepare("SELECT count(*) AS n FROM submissions").get() as { n: number }).n, seen, "the reader's snapshot");
      reader.exec("COMMIT");

      let mostNotCopied = 0;
      let latest = 0;
      await createInGroups(store, 40, (group) => {
        const { frames, copied } = walIndex(path);
        if (group >= 20) mostNotCopied = Math.max(mostNotCopied, frames - copied);
        latest = frames;
      });
      assert.ok(mostNotCopied <= MOST_NOT_COPIED, `${mostNotCopied} frames not copied after the reader`);
      assert.ok(latest < whileHeld, `the WAL (${latest} frames) did not start over after the reader (${whileHeld})`);
      assert.is(await total(store), created - first);
    } finally {
      reader.close();
      await store.close();
    }
  }),
);

test("closing leaves every committed row in the database file alone", () =>
  withFile(async (path) => {
    const store = await createLibsqlStore({ url: `file:${path}` });
    const rows = Array.from({ length: 3000 }, submission);
    assert.is(await store.importSubmissions(ACCOUNT, rows), rows.length);
    await store.close();
    assert.is(statSync(`${path}-wal`).size, 0, "the WAL is empty");
    const copy = `${path}.copy`;
    copyFileSync(path, copy);
    const reopened = await createLibsqlStore({ url: `file:${copy}` });
    try {
      assert.is(await total(reopened), rows.length);
    } finally {
      await reopened.close();
    }
  }),
);

test.run();

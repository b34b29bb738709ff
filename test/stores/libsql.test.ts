/**
 * The libSQL store through each transport it supports: an embedded file, `:memory:`, and a
 * remote server over HTTP with an auth token (a Hrana stand-in, as no sqld can be installed here).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import type { CompleteStore } from "../../src/store.ts";
import { createLibsqlStore } from "../../src/stores/libsql/index.ts";
import { importStatements } from "../../src/stores/sql/import.ts";
import type { SqlStoreOptions } from "../../src/stores/sql/store.ts";
import type { Submission } from "../../src/submission.ts";
import { startHranaServer } from "../support/hrana-server.ts";
import { testCompleteStore } from "./complete-store.ts";

const inMemory = (options?: SqlStoreOptions) => createLibsqlStore({ url: ":memory:", ...options });
testCompleteStore("libSQL :memory:", inMemory);

const inFile = async (options?: SqlStoreOptions) => {
  const dir = mkdtempSync(join(tmpdir(), "formsink-store-"));
  return removingAfterClose(await createLibsqlStore({ url: `file:${join(dir, "test.db")}`, ...options }), async () => rmSync(dir, { recursive: true, force: true }));
};
testCompleteStore("libSQL file", inFile);

const TOKEN = "test-token-3f1c";

const remoteStore = async (options?: SqlStoreOptions) => {
  const server = await startHranaServer(TOKEN);
  return removingAfterClose(await createLibsqlStore({ url: server.url, authToken: TOKEN, ...options }), () => server.close());
};
testCompleteStore("libSQL remote (HTTP + auth token)", remoteStore);

/** The store, whose `close` also removes what it used once the store is closed. */
function removingAfterClose<S extends CompleteStore>(store: S, remove: () => Promise<void>): S {
  return {
    ...store,
    async close() {
      await store.close();
      await remove();
    },
  };
}

const bulk = suite("SQL store: import");

bulk("an import is one transaction: a row the database refuses in its last statement leaves nothing of it", async () => {
  const store = await createLibsqlStore({ url: ":memory:" });
  try {
    const rows: Submission[] = Array.from({ length: 3000 }, (_, i) => ({
      submissionId: crypto.randomUUID(),
      popupId: "popup",
      data: { text: "x".repeat(400), i },
      domain: "example.com",
      userAgent: "agent",
      device: "desktop",
      status: "pending",
      createdAt: new Date(Date.UTC(2025, 0, 1) + i).toISOString(),
    }));
    assert.ok(importStatements("a", rows).rowStatements > 1, "the rows take several statements");
    const refused = { ...rows.at(-1)!, status: "archived" as Submission["status"] }; // the schema's CHECK refuses it
    let failed = false;
    await store.importSubmissions("a", [...rows.slice(0, -1), refused]).catch(() => (failed = true));
    assert.ok(failed);
    assert.is((await store.listSubmissions("a", { order: "asc", limit: 1, offset: 0 })).total, 0);
    assert.is(await store.importSubmissions("a", rows), rows.length);
  } finally {
    await store.close();
  }
});

bulk("after imports, one failed and one done, creates, status changes and deletes are counted again; each imported row has its created event", async () => {
  const store = await createLibsqlStore({ url: ":memory:" });
  try {
    const day = Date.UTC(2025, 0, 1);
    const row = (i: number): Submission => ({
      submissionId: crypto.randomUUID(),
      popupId: `popup_${i % 3}`,
      data: { email: `Person${i}@Example.com` },
      domain: i % 2 === 0 ? "a.example" : "b.example",
      userAgent: "agent",
      device: i % 4 === 0 ? "mobile" : "desktop",
      status: i % 5 === 0 ? "completed" : "pending",
      createdAt: new Date(day + i * 7_200_000).toISOString(),
    });
    const rows = Array.from({ length: 40 }, (_, i) => row(i));
    let failed = false;
    await store.importSubmissions("a", [row(100), { ...row(101), status: "archived" as Submission["status"] }]).catch(() => (failed = true));
    assert.ok(failed);
    const importedFrom = Date.now();
    assert.is(await store.importSubmissions("a", rows), rows.length);
    const importedBy = Date.now();
    const created = row(41);
    await store.insertSubmission("a", created);
    await store.setSubmissionStatus("a", rows[1]!.submissionId, "completed");
    await store.deleteSubmission("a", rows[2]!.submissionId);
    const kept = [...rows.filter((_, i) => i !== 2).map((r, i) => (i === 1 ? { ...r, status: "completed" as const } : r)), created];
    const windows: { createdAfter?: number; createdBefore?: number }[] = [{}, { createdAfter: day + 3 * 3_600_000, createdBefore: day + 50 * 3_600_000 }];
    for (const window of windows) {
      for (const filter of [{}, { popupId: "popup_1" }, { domain: "a.example", device: "desktop" }, { status: "completed" as const }, { popupId: "popup_0", domain: "b.example", device: "desktop", status: "pending" as const }]) {
        const expected = kept.filter((r) =>
          Object.entries(filter).every(([key, value]) => r[key as keyof Submission] === value) &&
          Date.parse(r.createdAt) > (window.createdAfter ?? -Infinity) && Date.parse(r.createdAt) < (window.createdBefore ?? Infinity));
        const { total } = await store.listSubmissions("a", { order: "asc", limit: 1, offset: 0, ...filter, ...window });
        assert.is(total, expected.length, JSON.stringify({ filter, window }));
      }
    }
    assert.equal(await store.findSubmissionsByIdentifier!("a", "email", "person7@example.com"), [rows[7]!.submissionId]);
    const page = await store.readEvents("a", { limit: 100 });
    assert.ok(!page.expired);
    const createdEvents = page.events.filter((e) => e.type === "submission.created");
    assert.equal(createdEvents.map((e) => e.data.submissionId), [...rows.map((r) => r.submissionId), created.submissionId]);
    assert.ok(createdEvents.every((e) => /^evt_[0-9a-f]{32}$/.test(e.id)), "event ids are made as newEventId makes them");
    const idTimes = createdEvents.slice(0, rows.length).map((e) => parseInt(e.id.slice(4, 16), 16));
    assert.ok(idTimes.every((at) => at >= importedFrom && at <= importedBy), "an imported event's id starts with the import's time");
    assert.is(new Set(createdEvents.map((e) => e.id)).size, createdEvents.length, "every event has its own id");
  } finally {
    await store.close();
  }
});

bulk.run();

const closing = suite("libSQL file: closing");

closing("closing lets the write in flight finish, keeps it, and refuses writes after", async () => {
  const dir = mkdtempSync(join(tmpdir(), "formsink-close-"));
  const url = `file:${join(dir, "close.db")}`;
  try {
    const store = await createLibsqlStore({ url });
    const row: Submission = {
      submissionId: "00000000-0000-7000-8000-000000000001", popupId: "popup", data: { i: 1 }, domain: "example.com",
      userAgent: "agent", device: "desktop", status: "pending", createdAt: "2025-01-01T00:00:00.000Z",
    };
    const inFlight = store.importSubmissions("a", [row]);
    await store.close();
    assert.is(await inFlight, 1);
    const after = await store.importSubmissions("a", [{ ...row, submissionId: "00000000-0000-7000-8000-000000000002" }]).then(() => undefined, (error: Error) => error);
    assert.match(String(after?.message), /closed/);
    const reopened = await createLibsqlStore({ url });
    try {
      assert.is((await reopened.listSubmissions("a", { order: "asc", limit: 10, offset: 0 })).total, 1);
    } finally {
      await reopened.close();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

closing.run();

const remote = suite("libSQL remote: transport");

remote("every query goes to the server, and a wrong token fails to open with a clear error", async () => {
  const server = await startHranaServer(TOKEN);
  try {
    const store = await createLibsqlStore({ url: server.url, authToken: TOKEN });
    const before = server.requests();
    await store.listSubmissions("a", { order: "desc", limit: 10, offset: 0 });
    assert.ok(server.requests() > before);
    await store.close();

    let error: unknown;
    await createLibsqlStore({ url: server.url, authToken: "wrong" }).catch((e: unknown) => (error = e));
    assert.instance(error, Error);
    assert.match(String(error), /401|Unauthorized/i);
  } finally {
    await server.close();
  }
});

remote.run();

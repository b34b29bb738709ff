import { suite } from "uvu";
import * as assert from "uvu/assert";
import { createEventPruner } from "../../src/event-pruning.ts";
import { createMemoryStore } from "../../src/stores/memory.ts";
import { createLibsqlStore } from "../../src/stores/libsql/index.ts";
import type { CompleteStore } from "../../src/store.ts";

const test = suite("event pruning");
const DAY = 24 * 60 * 60 * 1000;

const row = () => ({
  submissionId: crypto.randomUUID(), popupId: "p", data: { email: "a@example.com" }, domain: "example.com",
  userAgent: "agent", device: "desktop" as const, status: "pending" as const, createdAt: new Date().toISOString(),
});

for (const [name, open] of [["memory", async () => createMemoryStore()], ["libSQL", () => createLibsqlStore({ url: ":memory:" })]] as const) {
  test(`${name}: runOnce drops only events older than the retention, by the pruner's clock`, async () => {
    const store: CompleteStore = await open();
    try {
      await store.insertSubmission("acct", row());
      await store.insertSubmission("acct", row());
      let now = Date.now();
      const pruner = createEventPruner(store, { retentionDays: 7, clock: () => now });
      assert.is(await pruner.runOnce(), 0);
      now += 6 * DAY;
      assert.is(await pruner.runOnce(), 0, "six days later the events are kept");
      now += 2 * DAY;
      assert.is(await pruner.runOnce(), 2, "eight days later they are pruned");
      const page = await store.readEvents("acct", { limit: 10 });
      assert.equal(page, { expired: false, events: [], cursor: 2 });
    } finally {
      await store.close();
    }
  });
}

test("a retention of no days is refused", () => {
  assert.throws(() => createEventPruner(createMemoryStore(), { retentionDays: 0 }), /retentionDays/);
});

test.run();

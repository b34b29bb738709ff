/**
 * The per-account endpoint limit holds under creates at once: the store counts in the insert's
 * own write, so no two creates both see room for one more. PostgreSQL runs on a throwaway
 * cluster (test/support/postgres.ts), where the creates go over connections of their own.
 */
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { HttpError } from "../../src/http/errors.ts";
import type { CompleteStore } from "../../src/store.ts";
import { createLibsqlStore } from "../../src/stores/libsql/index.ts";
import { createMemoryStore } from "../../src/stores/memory.ts";
import { addWebhook } from "../../src/webhook-endpoints.ts";
import { stopClusterAfterSuites, storeOnNewDatabase } from "../support/postgres.ts";

const test = suite("webhook endpoints: the per-account limit");

const stores: [string, () => Promise<CompleteStore>][] = [
  ["memory", async () => createMemoryStore()],
  ["libSQL :memory:", () => createLibsqlStore({ url: ":memory:" })],
  ["PostgreSQL", () => storeOnNewDatabase()],
];

for (const [name, open] of stores) {
  test(`${name}: creates at once never take an account past the limit; the ones past it are 409`, async () => {
    const store = await open();
    try {
      const policy = { maxWebhooks: 3, allowPrivateWebhooks: false };
      const outcomes = await Promise.allSettled(
        Array.from({ length: 8 }, (_, i) => addWebhook(store, "acct", { url: `https://hooks.example.com/${i}` }, policy)),
      );
      const refused = outcomes.filter((outcome) => outcome.status === "rejected").map((outcome) => outcome.reason as unknown);
      assert.is(outcomes.length - refused.length, 3, "as many added as the limit");
      assert.is((await store.listWebhooks("acct")).length, 3);
      for (const reason of refused) {
        assert.instance(reason, HttpError);
        assert.is((reason as HttpError).status, 409);
      }
      await addWebhook(store, "other", { url: "https://hooks.example.com/other" }, policy);
      assert.is((await store.listWebhooks("other")).length, 1, "another account's count is its own");
    } finally {
      await store.close();
    }
  });
}

test.run();
stopClusterAfterSuites();

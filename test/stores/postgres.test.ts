/**
 * The PostgreSQL store against a real PostgreSQL server: a throwaway cluster started by the test
 * (test/support/postgres.ts), one fresh database per store the suites open.
 */
import { suite } from "uvu";
import type { CompleteStore } from "../../src/store.ts";
import { createPostgresStore } from "../../src/stores/postgres/index.ts";
import { sharedCluster, stopSharedCluster } from "../support/postgres.ts";
import { testCompleteStore } from "./complete-store.ts";

/** A store on a new database of the shared cluster; closing it drops the database. */
async function openOnNewDatabase(options: { identifyingFields?: readonly string[] } = {}): Promise<CompleteStore> {
  const database = await (await sharedCluster()).createDatabase();
  const store = await createPostgresStore({ url: database.url, ...options });
  return {
    ...store,
    async close() {
      await store.close();
      await database.drop();
    },
  };
}

testCompleteStore("PostgreSQL", openOnNewDatabase);

const done = suite("PostgreSQL: cluster");
done.after(stopSharedCluster);
done("the cluster answers until the end", async () => {
  await (await sharedCluster()).createDatabase().then((database) => database.drop());
});
done.run();

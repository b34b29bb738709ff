/**
 * The PostgreSQL store against a real PostgreSQL server: a throwaway cluster started by the test
 * (test/support/postgres.ts), one fresh database per store the suites open.
 */
import { stopClusterAfterSuites, storeOnNewDatabase } from "../support/postgres.ts";
import { testCompleteStore } from "./complete-store.ts";

testCompleteStore("PostgreSQL", storeOnNewDatabase);

stopClusterAfterSuites();

/**
 * The SQL of a list: one page and its total, with the same WHERE clause. Kept apart from the
 * store so that `test/stores/sql-schema.test.ts` can `EXPLAIN QUERY PLAN` these very statements.
 */
import type { SqlStatement } from "./driver.js";
import type { SubmissionQuery } from "../../store.js";
export declare const SUBMISSION_COLUMNS = "id, popup_id, domain, device, user_agent, status, created_at, data";
export declare function listStatements(accountId: string, query: SubmissionQuery): {
    page: SqlStatement;
    count: SqlStatement;
};

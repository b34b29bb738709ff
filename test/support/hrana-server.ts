/**
 * A test-only stand-in for a remote libSQL server (sqld / Turso): Hrana v2 over HTTP
 * (`POST /v2/pipeline`), backed by a local SQLite through the native client. It covers what
 * formsink's libSQL store sends (execute, batch with BEGIN/COMMIT steps) and, like Turso,
 * refuses requests without the right bearer token. There is no sqld on npm or apt, so this
 * is how the remote code path is exercised here.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import Database from "libsql";

type HranaValue =
  | { type: "null" }
  | { type: "integer"; value: string }
  | { type: "float"; value: number }
  | { type: "text"; value: string }
  | { type: "blob"; base64: string };

interface HranaStatement {
  sql?: string;
  sql_id?: number;
  args?: HranaValue[];
}

type Condition =
  | { type: "ok" | "error"; step: number }
  | { type: "not"; cond: Condition }
  | { type: "and" | "or"; conds: Condition[] }
  | { type: "is_autocommit" };

interface BatchStep {
  condition?: Condition;
  stmt: HranaStatement;
}

type PipelineRequest =
  | { type: "execute"; stmt: HranaStatement }
  | { type: "batch"; batch: { steps: BatchStep[] } }
  | { type: "store_sql"; sql_id: number; sql: string }
  | { type: "close_sql"; sql_id: number }
  | { type: "close" | "get_autocommit" };

export interface HranaServer {
  url: string;
  /** How many pipeline requests arrived with the right token, to prove traffic went remote. */
  requests(): number;
  close(): Promise<void>;
}

/** A value as the native binding binds it. */
type Value = null | bigint | number | string | Uint8Array;

export async function startHranaServer(authToken: string): Promise<HranaServer> {
  // One connection, used synchronously: each pipeline runs whole before the next starts, so a
  // batch's BEGIN...COMMIT is a transaction of its own. Statements are prepared once per text:
  // a conformance run sends the same few statements tens of thousands of times.
  const db = new Database(":memory:");
  const statements = new Map<string, Database.Statement>();
  const storedSql = new Map<number, string>();
  let served = 0;

  const decode = (value: HranaValue): Value =>
    value.type === "null" ? null
    : value.type === "integer" ? BigInt(value.value)
    : value.type === "float" ? value.value
    : value.type === "text" ? value.value
    : new Uint8Array(Buffer.from(value.base64, "base64"));
  const encode = (value: unknown): HranaValue =>
    value === null || value === undefined ? { type: "null" }
    : typeof value === "bigint" ? { type: "integer", value: String(value) }
    : typeof value === "number" ? { type: "float", value }
    : typeof value === "string" ? { type: "text", value }
    : { type: "blob", base64: Buffer.from(value as ArrayBuffer).toString("base64") };
  const sqlOf = (stmt: HranaStatement) => stmt.sql ?? storedSql.get(stmt.sql_id ?? -1) ?? "";
  const prepared = (sql: string): Database.Statement => {
    let statement = statements.get(sql);
    if (statement === undefined) {
      statement = db.prepare(sql).safeIntegers(true);
      if (statement.reader) statement.raw(true);
      statements.set(sql, statement);
    }
    return statement;
  };
  const run = (stmt: HranaStatement) => {
    try {
      const statement = prepared(sqlOf(stmt));
      const args = (stmt.args ?? []).map(decode);
      // SQLite tells neither the rows changed nor the row id of a statement that returns rows.
      if (statement.reader) {
        return {
          cols: statement.columns().map((column) => ({ name: column.name, decltype: column.type || null })),
          rows: (statement.all(args) as unknown[][]).map((row) => row.map(encode)),
          affected_row_count: 0,
          last_insert_rowid: null,
        };
      }
      const { changes, lastInsertRowid } = statement.run(args);
      return { cols: [], rows: [], affected_row_count: changes, last_insert_rowid: String(lastInsertRowid) };
    } catch (error) {
      // SQLite's result code before its message, as libSQL's clients report an error.
      throw new Error(`${(error as { code?: string }).code}: ${(error as Error).message}`);
    }
  };

  function runBatch(steps: BatchStep[]) {
    const stepResults: unknown[] = [];
    const stepErrors: unknown[] = [];
    const holds = (c: Condition): boolean =>
      c.type === "ok" ? stepResults[c.step] != null
      : c.type === "error" ? stepErrors[c.step] != null
      : c.type === "not" ? !holds(c.cond)
      : c.type === "and" ? c.conds.every(holds)
      : c.type === "or" ? c.conds.some(holds)
      : !db.inTransaction;
    for (const step of steps) {
      if (step.condition && !holds(step.condition)) {
        stepResults.push(null);
        stepErrors.push(null);
        continue;
      }
      try {
        stepResults.push(run(step.stmt));
        stepErrors.push(null);
      } catch (error) {
        stepResults.push(null);
        stepErrors.push({ message: String(error) });
      }
    }
    return { step_results: stepResults, step_errors: stepErrors };
  }

  function answer(request: PipelineRequest) {
    switch (request.type) {
      case "execute":
        return { type: "execute", result: run(request.stmt) };
      case "batch":
        return { type: "batch", result: runBatch(request.batch.steps) };
      case "store_sql":
        storedSql.set(request.sql_id, request.sql);
        return { type: "store_sql" };
      case "close_sql":
        storedSql.delete(request.sql_id);
        return { type: "close_sql" };
      case "get_autocommit":
        return { type: "get_autocommit", is_autocommit: true };
      default:
        return { type: request.type };
    }
  }

  const server: Server = createServer(async (req, res) => {
    if (req.headers.authorization !== `Bearer ${authToken}`) {
      res.writeHead(401, { "content-type": "text/plain" }).end("Unauthorized");
      return;
    }
    if (req.method === "GET" && req.url === "/v2") return void res.writeHead(200).end();
    if (req.method !== "POST" || req.url !== "/v2/pipeline") return void res.writeHead(404).end();
    let body = "";
    for await (const chunk of req) body += chunk;
    served++;
    const results = [];
    for (const request of (JSON.parse(body) as { requests: PipelineRequest[] }).requests) {
      try {
        results.push({ type: "ok", response: answer(request) });
      } catch (error) {
        results.push({ type: "error", error: { message: String(error), code: "SQLITE_ERROR" } });
      }
    }
    // Every answer closes its stream (no baton), and a stream closed ends its transaction.
    if (db.inTransaction) db.exec("ROLLBACK");
    res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ baton: null, base_url: null, results }));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests: () => served,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
        db.close();
      }),
  };
}

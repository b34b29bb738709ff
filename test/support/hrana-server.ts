/**
 * A test-only stand-in for a remote libSQL server (sqld / Turso): Hrana v2 over HTTP
 * (`POST /v2/pipeline`), backed by a local SQLite through the native client. It covers what
 * formsink's libSQL store sends (execute, batch with BEGIN/COMMIT steps) and, like Turso,
 * refuses requests without the right bearer token. There is no sqld on npm or apt, so this
 * is how the remote code path is exercised here.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { createClient, type InValue, type ResultSet, type Transaction } from "@libsql/client";

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

export async function startHranaServer(authToken: string): Promise<HranaServer> {
  const db = createClient({ url: ":memory:", intMode: "bigint" });
  const storedSql = new Map<number, string>();
  let served = 0;

  const decode = (value: HranaValue): InValue =>
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
  const result = (rs: ResultSet) => ({
    cols: rs.columns.map((name, i) => ({ name, decltype: rs.columnTypes[i] || null })),
    rows: rs.rows.map((row) => rs.columns.map((_, i) => encode(row[i]))),
    affected_row_count: rs.rowsAffected,
    last_insert_rowid: rs.lastInsertRowid === undefined ? null : String(rs.lastInsertRowid),
  });
  const sqlOf = (stmt: HranaStatement) => stmt.sql ?? storedSql.get(stmt.sql_id ?? -1) ?? "";
  const run = (stmt: HranaStatement, tx?: Transaction) =>
    (tx ?? db).execute({ sql: sqlOf(stmt), args: (stmt.args ?? []).map(decode) });

  async function runBatch(steps: BatchStep[]) {
    const stepResults: unknown[] = [];
    const stepErrors: unknown[] = [];
    const holds = (c: Condition): boolean =>
      c.type === "ok" ? stepResults[c.step] != null
      : c.type === "error" ? stepErrors[c.step] != null
      : c.type === "not" ? !holds(c.cond)
      : c.type === "and" ? c.conds.every(holds)
      : c.type === "or" ? c.conds.some(holds)
      : tx === undefined;
    // The native client pools connections, so BEGIN/COMMIT steps map onto its transaction API.
    let tx: Transaction | undefined;
    const empty = { cols: [], rows: [], affected_row_count: 0, last_insert_rowid: null };
    for (const step of steps) {
      if (step.condition && !holds(step.condition)) {
        stepResults.push(null);
        stepErrors.push(null);
        continue;
      }
      const sql = sqlOf(step.stmt);
      try {
        if (/^\s*BEGIN/i.test(sql)) {
          tx = await db.transaction(/DEFERRED/i.test(sql) ? "deferred" : /READ/i.test(sql) ? "read" : "write");
          stepResults.push(empty);
        } else if (/^\s*COMMIT/i.test(sql)) {
          await tx?.commit();
          tx = undefined;
          stepResults.push(empty);
        } else if (/^\s*ROLLBACK/i.test(sql)) {
          await tx?.rollback();
          tx = undefined;
          stepResults.push(empty);
        } else {
          stepResults.push(result(await run(step.stmt, tx)));
        }
        stepErrors.push(null);
      } catch (error) {
        stepResults.push(null);
        stepErrors.push({ message: String(error) });
      }
    }
    if (tx) await tx.rollback();
    return { step_results: stepResults, step_errors: stepErrors };
  }

  async function answer(request: PipelineRequest) {
    switch (request.type) {
      case "execute":
        return { type: "execute", result: result(await run(request.stmt)) };
      case "batch":
        return { type: "batch", result: await runBatch(request.batch.steps) };
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
        results.push({ type: "ok", response: await answer(request) });
      } catch (error) {
        results.push({ type: "error", error: { message: String(error), code: "SQLITE_ERROR" } });
      }
    }
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

/**
 * `formsink/postgres`: the store on PostgreSQL, for several formsink servers on one database.
 * `createPostgresStore({ url })` opens a pool of its own; `createPostgresStore({ sql })` uses a
 * `postgres` instance you made (and leaves closing it to you). The schema is migrated on open.
 */
import type postgres from "postgres";
import type { CompleteStore } from "../../store.ts";
import { compareByCodePoint } from "../../text-order.ts";
import { storageFault } from "./faults.ts";
import { migratePostgres, type SchemaUpgrade } from "./migrations.ts";
import { postgresStore } from "./store.ts";

export { POSTGRES_SCHEMA_VERSION } from "./migrations.ts";

interface CommonOptions {
  /**
   * The `data` fields erasure finds submissions by (docs/privacy.md). The database remembers
   * them (`["email"]` at first): given, they replace what it has and the index is rebuilt for
   * the change at open; not given, the database's stay.
   */
  identifyingFields?: readonly string[];
  /**
   * Milliseconds a store call may take (default 10000): past it the call fails with
   * `StoreUnavailable` (503) and the server cancels the transaction's statement. Connecting
   * has the same limit.
   */
  timeoutMs?: number;
}

export type PostgresStoreOptions = CommonOptions &
  (
    | {
        /**
         * `postgres://user:password@host:5432/database`; the `postgres` package's query
         * parameters apply (`?sslmode=require`, `?prepare=false` behind a transaction-mode pooler).
         */
        url: string;
        /** Connections in the pool (default 10). */
        max?: number;
        /** Named prepared statements (default true); false behind PgBouncer in transaction mode. */
        prepare?: boolean;
      }
    | {
        /** A `postgres` instance to use; the store never closes it. */
        sql: postgres.Sql;
      }
  );

const DEFAULT_TIMEOUT_MS = 10_000;

/** Opens (and migrates) a PostgreSQL database as a submission store. */
export async function createPostgresStore(options: PostgresStoreOptions): Promise<CompleteStore> {
  return (await openPostgresStore(options)).store;
}

/** `createPostgresStore`, also saying what the migration did (`from` = `to`: nothing): the CLI reports it. */
export async function openPostgresStore(options: PostgresStoreOptions): Promise<{ store: CompleteStore; upgrade: SchemaUpgrade }> {
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const sql =
    "sql" in options
      ? options.sql
      : // Loaded on open, so that a program that bundles this module (formsink's own command) loads the driver only for PostgreSQL.
        (await import("postgres")).default(options.url, {
          max: options.max ?? 10,
          ...(options.prepare === undefined ? {} : { prepare: options.prepare }),
          connect_timeout: Math.max(1, Math.ceil(timeoutMs / 1000)),
          // Idle connections are closed, so a pool does not hold connections a pooler or the server could give others.
          idle_timeout: 60,
          // Seconds before reconnecting after the attempt-th failure: at most one, so a server
          // back from a restart is found within a second (the package's own grows to 20).
          backoff: (attempt: number) => Math.min(2 ** attempt / 20, 1),
          onnotice: () => {},
          // The driver's catalog query for array types, run first on each new connection, fails
          // unhandled when the connection fails under it (a pooler refusing logins while the
          // database restarts), and the rejection ends the process: postgres 3.4.9 drops that
          // promise (porsager/postgres#1192). The store needs none of those types: it writes its
          // one array parameter as a literal (store.ts) and reads its one array column's text
          // (webhooks.ts).
          fetch_types: false,
          connection: { application_name: "formsink" },
        });
  const close = "sql" in options ? async () => {} : () => sql.end({ timeout: 5 });
  try {
    // No time limit: an upgrade of a big database may take long, and connecting has its own.
    const upgrade = await migratePostgres(sql);
    const identifyingFields = await useIdentifyingFields(sql, options.identifyingFields);
    return { store: postgresStore(sql, { timeoutMs, identifyingFields, close }), upgrade };
  } catch (error) {
    await close().catch(() => {});
    throw storageFault(error);
  }
}

/**
 * Makes `fields` (when given) the database's identifying fields and returns them, sorted and
 * distinct: a field added is indexed from every existing row, a field removed takes its index
 * rows along, in one transaction.
 */
async function useIdentifyingFields(sql: postgres.Sql, fields: readonly string[] | undefined): Promise<readonly string[]> {
  const current = new Set((await sql`SELECT field FROM identifying_fields`).map((row) => String(row.field)));
  const wanted = [...new Set(fields ?? current)].sort(compareByCodePoint);
  const added = wanted.filter((field) => !current.has(field));
  const removed = [...current].filter((field) => !wanted.includes(field));
  if (added.length === 0 && removed.length === 0) return wanted;
  // One statement, so one transaction, with no client-side transaction held open (writes.ts).
  await sql`WITH removed AS (
      DELETE FROM identifying_fields WHERE field IN (SELECT json_array_elements_text(${JSON.stringify(removed)}::text::json))),
    unindexed AS (
      DELETE FROM submission_identifiers WHERE field IN (SELECT json_array_elements_text(${JSON.stringify(removed)}::text::json))),
    added AS (
      INSERT INTO identifying_fields (field) SELECT json_array_elements_text(${JSON.stringify(added)}::text::json) ON CONFLICT DO NOTHING)
    INSERT INTO submission_identifiers (account_id, field, value_key, submission_id)
      SELECT s.account_id, d.key, formsink_identifier_key(d.key, d.value #>> '{}'), s.id
      FROM submissions s, json_each(s.data::json) AS d
      WHERE json_typeof(d.value) = 'string' AND d.key IN (SELECT json_array_elements_text(${JSON.stringify(added)}::text::json))
      ON CONFLICT DO NOTHING`;
  return wanted;
}

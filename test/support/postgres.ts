/**
 * A throwaway PostgreSQL cluster for the tests: Debian's `postgresql` binaries (initdb, pg_ctl)
 * run on a temporary directory, with their own port on 127.0.0.1 and their own socket directory,
 * so that nothing of a system cluster is touched. It is stopped and removed when the test calls
 * `stop`, and in any case when the process exits. Every step has a time limit: a cluster that
 * will not start fails the test with PostgreSQL's log, never hangs it.
 *
 * initdb refuses to run as root: as root, every command runs as the `postgres` system user
 * (runuser), which owns the directory. Runs in Node, Bun and Deno (node:child_process).
 */
import { execFile, execFileSync } from "node:child_process";
import { chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { connect, createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import postgres from "postgres";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import type { CompleteStore } from "../../src/store.ts";
import { createPostgresStore } from "../../src/stores/postgres/index.ts";
import { migratePostgres } from "../../src/stores/postgres/migrations.ts";

const INSTALL_HINT = "PostgreSQL is not installed: apt-get install postgresql (the tests start a throwaway cluster with its initdb and pg_ctl)";

/** Seconds pg_ctl waits for the server to start or stop; the command itself is killed a little later. */
const PG_CTL_WAIT_SECONDS = 30;

export interface PostgresCluster {
  /** A URL of `database` (default `postgres`) for the superuser `postgres`, over TCP. */
  url(database?: string): string;
  readonly port: number;
  /** The directory holding the cluster's unix socket. */
  readonly socketDir: string;
  /** A new empty database and its URL; `drop` removes it (closing what is still connected). */
  createDatabase(): Promise<{ name: string; url: string; drop(): Promise<void> }>;
  /**
   * A database at the newest schema holding only the rows its migrations insert, as a new one
   * migrated does, and its URL. `release`, once its user has closed every connection, empties
   * it for a later call; a database something still works on, or that fails to empty, is
   * dropped instead.
   */
  migratedDatabase(): Promise<{ name: string; url: string; release(): Promise<void> }>;
  /** Stops the server as `pg_ctl stop -m fast` does: connected sessions are cut off. */
  stopServer(): Promise<void>;
  /** Starts the stopped server again, on the same port. */
  startServer(): Promise<void>;
  /** Stops the server and removes the directory. */
  stop(): Promise<void>;
  /**
   * CPU seconds (user + system) the server's processes have used since it started: the
   * postmaster, its live children and those it has reaped. Linux only (/proc); the benchmarks use it.
   */
  cpuSeconds(): number;
}

/** The directory of initdb and pg_ctl: `POSTGRES_BIN`, the newest /usr/lib/postgresql/N/bin, or PATH. */
export function postgresBinDir(): string {
  const fromEnv = process.env.POSTGRES_BIN;
  if (fromEnv) {
    if (!existsSync(join(fromEnv, "initdb"))) throw new Error(`POSTGRES_BIN=${fromEnv} has no initdb. ${INSTALL_HINT}`);
    return fromEnv;
  }
  const root = "/usr/lib/postgresql";
  const versions = existsSync(root) ? readdirSync(root).filter((v) => /^\d+$/.test(v)).sort((a, b) => Number(b) - Number(a)) : [];
  for (const version of versions) if (existsSync(join(root, version, "bin", "initdb"))) return join(root, version, "bin");
  for (const dir of (process.env.PATH ?? "").split(":")) if (dir && existsSync(join(dir, "initdb"))) return dir;
  throw new Error(INSTALL_HINT);
}

const isRoot = () => typeof process.getuid === "function" && process.getuid() === 0;

/** Runs a PostgreSQL binary as the user that owns the cluster; rejects with its output on failure or after `timeoutMs`. */
function run(bin: string, args: readonly string[], timeoutMs: number): Promise<string> {
  const [file, argv] = isRoot() ? ["runuser", ["-u", "postgres", "--", bin, ...args]] : [bin, [...args]];
  return new Promise((resolve, reject) => {
    execFile(file, argv, { timeout: timeoutMs, killSignal: "SIGKILL", encoding: "utf8" }, (error, stdout, stderr) => {
      if (error) reject(new Error(`${bin} ${args.join(" ")} failed: ${error.message}\n${stdout}${stderr}`));
      else resolve(stdout);
    });
  });
}

/** A port nothing listens on now. */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      server.close(() => (typeof address === "object" && address ? resolve(address.port) : reject(new Error("no port"))));
    });
  });
}

/** Resolves once something accepts connections on `port`; rejects after `timeoutMs`. */
async function listening(port: number, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const accepted = await new Promise<boolean>((resolve) => {
      const socket = connect(port, "127.0.0.1");
      socket.once("connect", () => (socket.destroy(), resolve(true)));
      socket.once("error", () => resolve(false));
    });
    if (accepted) return;
    if (Date.now() > deadline) throw new Error(`nothing listens on port ${port} after ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** Initialises and starts a cluster; `settings` are extra `postgres -c` settings. */
export async function startPostgresCluster(settings: Record<string, string> = {}): Promise<PostgresCluster> {
  const bin = postgresBinDir();
  const dir = mkdtempSync(join(tmpdir(), "formsink-pg-"));
  const dataDir = join(dir, "data");
  const logFile = join(dir, "server.log");
  if (isRoot()) {
    const { uid, gid } = postgresUser();
    chownSync(dir, uid, gid);
  }
  let port = await freePort();
  const pgCtl = join(bin, "pg_ctl");
  const options = () => Object.entries({
    port: String(port),
    listen_addresses: "127.0.0.1",
    unix_socket_directories: dir,
    // A throwaway cluster: durability is not what these tests measure.
    fsync: "off",
    synchronous_commit: "off",
    full_page_writes: "off",
    max_connections: "200",
    ...settings,
  })
    .map(([name, value]) => `-c ${name}=${value}`)
    .join(" ");

  exitOnStopSignals();
  let running = false;
  const removeNow = () => {
    if (running) {
      // The process is exiting: no time for a clean stop.
      try {
        execFileSync(...pgCtlCommand(pgCtl, ["stop", "-D", dataDir, "-m", "immediate", "-w", "-t", "10"]), { stdio: "ignore", timeout: 15_000 });
      } catch {
        // already stopped
      }
      running = false;
    }
    rmSync(dir, { recursive: true, force: true });
  };
  process.once("exit", removeNow);

  const startServer = async () => {
    try {
      await run(pgCtl, ["start", "-D", dataDir, "-l", logFile, "-w", "-t", String(PG_CTL_WAIT_SECONDS), "-o", options()], (PG_CTL_WAIT_SECONDS + 5) * 1000);
    } catch (error) {
      throw new Error(`${(error as Error).message}\n${readLog(logFile)}`);
    }
    running = true;
  };
  const stopServer = async () => {
    await run(pgCtl, ["stop", "-D", dataDir, "-m", "fast", "-w", "-t", String(PG_CTL_WAIT_SECONDS)], (PG_CTL_WAIT_SECONDS + 5) * 1000);
    running = false;
  };

  try {
    await run(join(bin, "initdb"), ["-D", dataDir, "-U", "postgres", "--auth=trust", "-E", "UTF8", "--locale=C", "--no-sync"], 120_000);
    // The port was free when picked; another process may take it before the server binds it.
    for (let attempt = 1; ; attempt++) {
      try {
        await startServer();
        break;
      } catch (error) {
        if (attempt === 3 || !/Address already in use/.test(String(error))) throw error;
        port = await freePort();
      }
    }
  } catch (error) {
    process.removeListener("exit", removeNow);
    removeNow();
    throw error;
  }

  const url = (database = "postgres") => `postgres://postgres@127.0.0.1:${port}/${database}`;
  const admin = postgres(url(), { max: 2, onnotice: () => {}, connect_timeout: 10, idle_timeout: 1 });
  let databases = 0;
  const createDatabase = async () => {
    const name = `formsink_test_${process.pid}_${++databases}`;
    await admin.unsafe(`CREATE DATABASE ${name} STRATEGY = FILE_COPY`);
    return {
      name,
      url: url(name),
      drop: async () => {
        await admin.unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      },
    };
  };
  const emptied = new MigratedDatabases(admin, createDatabase);
  return {
    url,
    port,
    socketDir: dir,
    createDatabase,
    migratedDatabase: () => emptied.take(),
    stopServer,
    startServer,
    cpuSeconds: () => clusterCpuSeconds(Number(readFileSync(join(dataDir, "postmaster.pid"), "utf8").split("\n")[0])),
    async stop() {
      await emptied.close();
      await admin.end({ timeout: 1 });
      try {
        if (running) await stopServer();
      } finally {
        process.removeListener("exit", removeNow);
        removeNow();
      }
    },
  };
}

/**
 * Migrated databases kept for reuse. Creating a database costs a checkpoint and migrating it
 * runs every migration, which a conformance suite would pay once per test; emptying one is a
 * few deletes. Emptying deletes every row but the migrations' log (triggers off, so that no
 * trigger writes what was just deleted), puts back the rows the migrations inserted and
 * restarts the sequences, in one transaction.
 */
class MigratedDatabases {
  private readonly idle: { name: string; url: string; sql: postgres.Sql }[] = [];
  /** The statement that empties a database, read off the first one migrated. */
  private emptying: Promise<string> | undefined;

  constructor(
    private readonly admin: postgres.Sql,
    private readonly create: () => Promise<{ name: string; url: string; drop(): Promise<void> }>,
  ) {}

  async take(): Promise<{ name: string; url: string; release(): Promise<void> }> {
    const database = this.idle.pop() ?? (await this.migrateNew());
    return { name: database.name, url: database.url, release: () => this.release(database) };
  }

  private async migrateNew(): Promise<{ name: string; url: string; sql: postgres.Sql }> {
    const { name, url } = await this.create();
    const sql = postgres(url, { max: 1, onnotice: () => {}, connect_timeout: 10 });
    await migratePostgres(sql);
    this.emptying ??= emptyingStatement(sql);
    await this.emptying;
    return { name, url, sql };
  }

  private async release(database: { name: string; url: string; sql: postgres.Sql }): Promise<void> {
    try {
      // Idle sessions hold no transaction and no lock (a pooler's server connections stay idle).
      const [busy] = await this.admin`SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = ${database.name} AND state <> 'idle'`;
      if (busy!.n !== 0) throw new Error(`a session still works on ${database.name}`);
      await database.sql.unsafe(await this.emptying!);
      this.idle.push(database);
    } catch {
      await database.sql.end({ timeout: 1 });
      await this.admin.unsafe(`DROP DATABASE IF EXISTS ${database.name} WITH (FORCE)`);
    }
  }

  async close(): Promise<void> {
    await Promise.all(this.idle.splice(0).map(({ sql }) => sql.end({ timeout: 1 })));
  }
}

/** The statement that brings a just-migrated database's rows and sequences back to what they are now. */
async function emptyingStatement(sql: postgres.Sql): Promise<string> {
  const quote = (text: string) => `'${text.replaceAll("'", "''")}'`;
  const tables = (await sql`SELECT tablename FROM pg_tables WHERE schemaname = 'public' AND tablename <> 'formsink_migrations'`).map((row) => `"${row.tablename}"`);
  const sequences = (await sql`SELECT sequencename FROM pg_sequences WHERE schemaname = 'public'`).map((row) => `"${row.sequencename}"`);
  const statements = ["BEGIN", "SET LOCAL session_replication_role = replica", ...tables.map((table) => `DELETE FROM ${table}`)];
  for (const table of tables) {
    const [{ rows }] = (await sql.unsafe(`SELECT json_agg(t)::text AS rows FROM ${table} t`)) as unknown as [{ rows: string | null }];
    if (rows !== null) statements.push(`INSERT INTO ${table} OVERRIDING SYSTEM VALUE SELECT * FROM json_populate_recordset(NULL::${table}, ${quote(rows)})`);
  }
  statements.push(...sequences.map((sequence) => `ALTER SEQUENCE ${sequence} RESTART`), "COMMIT");
  return statements.join(";\n");
}

/** The CPU seconds of `postmaster`, of the children it reaped (cutime, cstime) and of its live children. */
function clusterCpuSeconds(postmaster: number): number {
  const stat = (pid: number | string) => readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ");
  const own = stat(postmaster);
  let ticks = Number(own[11]) + Number(own[12]) + Number(own[13]) + Number(own[14]);
  for (const pid of readdirSync("/proc").filter((name) => /^\d+$/.test(name))) {
    try {
      const fields = stat(pid);
      if (Number(fields[1]) === postmaster) ticks += Number(fields[11]) + Number(fields[12]);
    } catch {
      // the process has exited
    }
  }
  return ticks / 100; // clock ticks (100 Hz)
}

function pgCtlCommand(pgCtl: string, args: string[]): [string, string[]] {
  return isRoot() ? ["runuser", ["-u", "postgres", "--", pgCtl, ...args]] : [pgCtl, args];
}

function postgresUser(): { uid: number; gid: number } {
  const line = readFileSync("/etc/passwd", "utf8").split("\n").find((entry) => entry.startsWith("postgres:"));
  if (line === undefined) throw new Error(`running as root, but there is no postgres system user to run initdb as. ${INSTALL_HINT}`);
  const [, , uid, gid] = line.split(":");
  return { uid: Number(uid), gid: Number(gid) };
}

function readLog(logFile: string): string {
  try {
    return readFileSync(logFile, "utf8").slice(-4000);
  } catch {
    return "(no server log)";
  }
}

export interface Pooler {
  /** A URL of `database` through the pooler. */
  url(database: string): string;
  stop(): Promise<void>;
}

/**
 * Debian's PgBouncer in transaction mode in front of `cluster`, on its own port: each
 * transaction may run on a different server connection, as behind any transaction-mode pooler.
 */
export async function startPgBouncer(cluster: PostgresCluster, settings: Record<string, string> = {}): Promise<Pooler> {
  const bin = ["/usr/sbin/pgbouncer", ...(process.env.PATH ?? "").split(":").map((dir) => join(dir, "pgbouncer"))].find((path) => existsSync(path));
  if (bin === undefined) throw new Error("PgBouncer is not installed: apt-get install pgbouncer (the tests start their own, in transaction mode)");
  const dir = mkdtempSync(join(tmpdir(), "formsink-pgbouncer-"));
  const port = await freePort();
  const pidFile = join(dir, "pgbouncer.pid");
  writeFileSync(join(dir, "userlist.txt"), '"postgres" ""\n');
  writeFileSync(
    join(dir, "pgbouncer.ini"),
    `[databases]
* = host=127.0.0.1 port=${cluster.port}
[pgbouncer]
listen_addr = 127.0.0.1
listen_port = ${port}
unix_socket_dir = ${dir}
auth_type = trust
auth_file = ${join(dir, "userlist.txt")}
pool_mode = transaction
default_pool_size = 4
max_client_conn = 500
pidfile = ${pidFile}
logfile = ${join(dir, "pgbouncer.log")}
${Object.entries(settings).map(([name, value]) => `${name} = ${value}\n`).join("")}`,
  );
  if (isRoot()) {
    const { uid, gid } = postgresUser();
    for (const name of ["", "userlist.txt", "pgbouncer.ini"]) chownSync(join(dir, name), uid, gid);
  }
  const kill = () => {
    try {
      process.kill(Number(readFileSync(pidFile, "utf8").trim()), "SIGTERM");
    } catch {
      // not running
    }
  };
  const removeNow = () => {
    kill();
    rmSync(dir, { recursive: true, force: true });
  };
  process.once("exit", removeNow);
  try {
    // PgBouncer refuses to run as root: as root it runs as the cluster's user.
    await run(bin, ["-d", join(dir, "pgbouncer.ini")], 15_000);
    await listening(port, 10_000);
  } catch (error) {
    process.removeListener("exit", removeNow);
    removeNow();
    throw error;
  }
  return {
    url: (database) => `postgres://postgres@127.0.0.1:${port}/${database}`,
    async stop() {
      process.removeListener("exit", removeNow);
      removeNow();
    },
  };
}

/**
 * A test run stopped by a signal (Ctrl-C, or test/run.sh stopped) exits as a process does, so
 * that its `exit` listeners stop and remove the clusters and poolers it started: by default a
 * signal ends the process without them, and a cluster runs in a session of its own, which no
 * signal to the run reaches.
 */
function exitOnStopSignals(): void {
  if (exitingOnSignals) return;
  exitingOnSignals = true;
  process.once("SIGINT", () => process.exit(130));
  process.once("SIGTERM", () => process.exit(143));
}
let exitingOnSignals = false;

/**
 * A store operation a failed test left behind (its assertion threw first) can reject after
 * that test, once its store is closed and its database dropped. Unhandled, that rejection ends
 * the process before uvu reports any failure; it is printed instead, and fails the run.
 */
function reportAbandonedRejections(): void {
  if (process.listenerCount("unhandledRejection") > 0) return;
  process.on("unhandledRejection", (reason) => {
    console.error("A rejection no test awaited (an operation a failed test left behind):", reason);
    process.exitCode = 1;
  });
}

let shared: Promise<PostgresCluster> | undefined;
let sharedPooler: Promise<Pooler> | undefined;

/**
 * One cluster for every test of a process, started on first use; `stopSharedCluster` (or the
 * process's exit) stops it.
 */
export function sharedCluster(): Promise<PostgresCluster> {
  reportAbandonedRejections();
  shared ??= startPostgresCluster();
  return shared;
}

/** A PgBouncer in front of the shared cluster, started on first use; `stopSharedCluster` stops it too. */
export function sharedPgBouncer(): Promise<Pooler> {
  sharedPooler ??= sharedCluster().then(startPgBouncer);
  return sharedPooler;
}

export async function stopSharedCluster(): Promise<void> {
  const [cluster, pooler] = [shared, sharedPooler];
  shared = sharedPooler = undefined;
  if (pooler) await (await pooler).stop();
  if (cluster) await (await cluster).stop();
}

/**
 * A PostgreSQL store on a database of the shared cluster as new, migrated and empty (through
 * `pooler` when given); closing the store hands the database back, to be emptied for the next.
 */
export async function storeOnNewDatabase(
  options: { identifyingFields?: readonly string[]; timeoutMs?: number; pooler?: Pooler } = {},
): Promise<CompleteStore> {
  const { pooler, ...storeOptions } = options;
  const database = await (await sharedCluster()).migratedDatabase();
  let store: CompleteStore;
  try {
    // Behind a transaction-mode pooler, a statement prepared on one server connection is not on the next.
    store = await createPostgresStore(pooler ? { url: pooler.url(database.name), prepare: false, ...storeOptions } : { url: database.url, ...storeOptions });
  } catch (error) {
    await database.release();
    throw error;
  }
  return {
    ...store,
    async close() {
      await store.close();
      await database.release();
    },
  };
}

/** Files of this process that called `stopClusterAfterSuites`, and how many of their last suites have run. */
let clusterFiles = 0;
let clusterFilesDone = 0;

/**
 * Registers the suite that runs after a file's PostgreSQL suites: it checks the shared cluster
 * still takes new databases; after the last such file of the process it stops and removes the
 * cluster. uvu imports every file of a run before it runs any suite, so every file that uses
 * the cluster has registered by then, and the files of one process share one cluster (and its
 * migrated databases) instead of each starting its own.
 */
export function stopClusterAfterSuites(): void {
  clusterFiles++;
  const last = suite("PostgreSQL: the test cluster");
  last.after(async () => {
    if (++clusterFilesDone === clusterFiles) await stopSharedCluster();
  });
  last("still takes new databases after every suite", async () => {
    const database = await (await sharedCluster()).createDatabase();
    const sql = postgres(database.url, { max: 1, onnotice: () => {} });
    try {
      assert.equal([...(await sql`SELECT 1 AS one`)], [{ one: 1 }]);
    } finally {
      await sql.end({ timeout: 1 });
      await database.drop();
    }
  });
  last.run();
}

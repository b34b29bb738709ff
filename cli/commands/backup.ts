import { copyFileSync, existsSync, renameSync, rmSync } from "node:fs";
import { parseArgs } from "node:util";
import { isOpenElsewhere, openLibsqlFile } from "../../src/stores/libsql/file.ts";
import { localPath } from "../../src/stores/libsql/options.ts";
import type { SqlDriver } from "../../src/stores/sql/driver.ts";
import { MIGRATIONS } from "../../src/stores/sql/migrations.ts";
import { DATABASE_HELP, databaseError, databaseUrl, displayUrl, isPostgresUrl } from "../database.ts";
import { CommandError, EXIT_OK, type Io, messageOf, UsageError } from "../usage.ts";

const BACKUP_HELP = `Write a consistent snapshot of a libSQL database file, safe while formsink serves it:
the copy holds every write committed before it started, in one self-contained file.

Usage:
  formsink backup --output FILE [--db URL] [--force]

Options:
${DATABASE_HELP}
  --output <file>
                where to write the backup
  --force       replace --output if it exists
  -h, --help    show this help

Remote databases keep their own backups: Turso has point-in-time restore, D1 Time Travel
(docs/operations.md).`;

const RESTORE_HELP = `Replace a libSQL database file with a backup, after checking the backup's integrity and
that this formsink knows its schema. Stop the server on that database first: a database another
process has open is refused.

Usage:
  formsink restore --input FILE [--db URL] [--force]

Options:
  --input <file>
                the backup to restore (made by formsink backup)
${DATABASE_HELP}
  --force       replace a database that holds data
  -h, --help    show this help`;

/** The options both commands take: the database, the other file, and --force. */
interface FileCommand {
  url: string;
  file: string;
  force: boolean;
}

/** Undefined when only help was asked for (and printed). */
function parseFileCommand(args: string[], io: Io, command: "backup" | "restore"): FileCommand | undefined {
  const fileFlag = command === "backup" ? "output" : "input";
  const { values } = parseArgs({
    args,
    options: { db: { type: "string" }, [fileFlag]: { type: "string" }, force: { type: "boolean" }, help: { type: "boolean", short: "h" } },
  });
  if (values.help) {
    io.stdout(command === "backup" ? BACKUP_HELP : RESTORE_HELP);
    return undefined;
  }
  const file = values[fileFlag];
  if (typeof file !== "string") throw new UsageError(`${command} needs --${fileFlag} FILE`);
  return { url: databaseUrl(values.db as string | undefined, io.env), file, force: values.force === true };
}

export async function backupCommand(args: string[], io: Io): Promise<number> {
  const parsed = parseFileCommand(args, io, "backup");
  if (!parsed) return EXIT_OK;
  const { url, file: output, force } = parsed;
  const source = databaseFile(url, "back up");
  if (!existsSync(source)) throw new CommandError(`no database at ${source}`);
  if (existsSync(output) && !force) throw new CommandError(`${output} exists; pass --force to replace it`);
  // Written beside the output and renamed into place: a failed backup never leaves a partial
  // file under the output's name, nor replaces a good older one.
  const partial = partialFile(output);
  const connection = openLibsqlFile(source);
  try {
    await schemaVersion(connection.driver, source);
    // One read transaction: a consistent snapshot, while the server keeps writing to the WAL.
    await connection.driver.execute({ sql: "VACUUM INTO ?", args: [partial] });
    renameSync(partial, output);
  } catch (error) {
    removeDatabaseFiles(partial);
    // SQLite's own words ("database or disk is full", "disk I/O error") with both files named:
    // the store's words for a request ("The database has no space left") would blame the
    // database, which a backup only reads, for the output's full disk.
    throw error instanceof CommandError ? error : new CommandError(`backup of ${source} to ${output} failed: ${messageOf(databaseError(error))}`);
  } finally {
    await connection.close();
  }
  io.stderr(`backed up ${displayUrl(url)} to ${output}`);
  return EXIT_OK;
}

export async function restoreCommand(args: string[], io: Io): Promise<number> {
  const parsed = parseFileCommand(args, io, "restore");
  if (!parsed) return EXIT_OK;
  const { url, file: input, force } = parsed;
  const target = databaseFile(url, "restore into");
  if (!existsSync(input)) throw new CommandError(`no backup at ${input}`);
  // Before this process opens the database itself: a connection closed here keeps its lock
  // until its prepared statements are collected.
  refuseIfOpen(target);

  // The backup is checked as the very copy that will replace the database (opening a database
  // file writes to it: the backup itself stays untouched).
  const staged = partialFile(target);
  try {
    copyFileSync(input, staged);
    const copy = openLibsqlFile(staged);
    try {
      const { rows } = await copy.driver.execute({ sql: "PRAGMA integrity_check" });
      const problems = rows.map((row) => String(Object.values(row)[0]));
      if (problems.join() !== "ok") throw new CommandError(`${input} is damaged: ${problems.slice(0, 3).join("; ")}`);
      await schemaVersion(copy.driver, input);
    } finally {
      await copy.close();
    }
    if (existsSync(target) && !force && (await holdsData(target))) {
      throw new CommandError(`${target} holds submissions or keys; pass --force to replace it`);
    }
    // The old WAL belongs to the old file: left beside the new one, SQLite would replay it there.
    for (const suffix of ["-wal", "-shm"]) rmSync(`${target}${suffix}`, { force: true });
    for (const suffix of ["-wal", "-shm"]) rmSync(`${staged}${suffix}`, { force: true });
    renameSync(staged, target);
  } catch (error) {
    removeDatabaseFiles(staged);
    throw error instanceof CommandError ? error : new CommandError(`restore of ${input} failed: ${messageOf(error)}`);
  }
  io.stderr(`restored ${input} into ${displayUrl(url)}`);
  return EXIT_OK;
}

/**
 * Where backup and restore write `file` before renaming it into place: `FILE.partial`, beside it,
 * in sight and outside a `*.db` glob. A run killed midway (an OOM kill, a reboot) leaves it
 * there, and the next run for the same file removes it first: named after the process instead,
 * leftovers piled up unseen, and one whose process id came again (a container's command often
 * has the same one) made `VACUUM INTO` refuse every later backup.
 */
function partialFile(file: string): string {
  const partial = `${file}.partial`;
  removeDatabaseFiles(partial);
  return partial;
}

/** A database file and the files SQLite keeps beside it. */
function removeDatabaseFiles(path: string): void {
  for (const suffix of ["", "-journal", "-wal", "-shm"]) rmSync(`${path}${suffix}`, { force: true });
}

/**
 * A server keeps the file it opened: replaced under it, it would go on answering reads from the
 * old one and refuse every write until restarted. So is a restore refused while any process has
 * the database open, even with --force; a server that crashed holds nothing.
 */
function refuseIfOpen(target: string): void {
  if (existsSync(target) && isOpenElsewhere(target)) {
    throw new CommandError(`${target} is open in another process (a running formsink serve?); stop it, then restore`);
  }
}

/** The file of a local database URL; remote and in-memory databases have their own ways. */
function databaseFile(url: string, action: string): string {
  const path = localPath(url);
  if (path === ":memory:") throw new UsageError(`cannot ${action} an in-memory database`);
  if (isPostgresUrl(url)) {
    throw new UsageError(
      `cannot ${action} ${displayUrl(url)}: formsink backs up only libSQL files; back up PostgreSQL with its own tools ` +
        "(pg_dump and pg_restore, or your provider's backups), and `formsink export` copies its submissions",
    );
  }
  if (path === undefined) {
    throw new UsageError(
      `cannot ${action} ${displayUrl(url)}: only libSQL files are backed up by formsink; a remote database keeps ` +
        "its own backups (Turso: point-in-time restore; see docs/operations.md), and `formsink export` copies its submissions",
    );
  }
  return path;
}

/** The schema version, when this formsink knows it; a file that is not formsink's is refused. */
async function schemaVersion(driver: SqlDriver, file: string): Promise<number> {
  let version: number;
  try {
    const { rows } = await driver.execute({ sql: "SELECT COALESCE(MAX(version), 0) AS version FROM formsink_migrations" });
    version = Number(rows[0]?.version);
  } catch {
    throw new CommandError(`${file} is not a formsink database (no schema version in it)`);
  }
  if (version > MIGRATIONS.length) {
    throw new CommandError(`${file} has schema version ${version}, newer than this formsink knows (${MIGRATIONS.length}); upgrade formsink first`);
  }
  return version;
}

async function holdsData(file: string): Promise<boolean> {
  const connection = openLibsqlFile(file);
  try {
    const { rows } = await connection.driver.execute({
      sql: "SELECT name FROM sqlite_master WHERE type = 'table' AND name IN ('submissions', 'api_keys')",
    });
    for (const { name } of rows) {
      const { rows: found } = await connection.driver.execute({ sql: `SELECT 1 FROM ${String(name)} LIMIT 1` });
      if (found.length > 0) return true;
    }
    return false;
  } finally {
    await connection.close();
  }
}

import { extname } from "node:path";
import { parseArgs } from "node:util";
import { IMPORT_FORMATS, type ImportFormat, type ImportRecord, readSubmissions } from "../../src/import/records.ts";
import { DEFAULT_LIMITS } from "../../src/options.ts";
import type { Submission } from "../../src/submission.ts";
import { DATABASE_HELP, databaseUrl, openDatabase } from "../database.ts";
import { progressBar } from "../progress.ts";
import { readTextFile } from "../text-file.ts";
import { EXIT_FAILURE, EXIT_OK, type Io, UsageError } from "../usage.ts";

const HELP = `Import submissions into an account: formsink's own exports, or list pages saved from the
service formsink replaces.

Usage:
  formsink import --account NAME [--format ndjson|csv|pages] [--skip-invalid] FILE...

Every record is checked first, with the same rules as the API. If any is invalid, each is
reported with its file and line and nothing is imported, unless --skip-invalid imports the
valid ones. Submissions keep their ids, times and status; an id the account already has is
left as it is, so running the same import again adds nothing.

Options:
  --account <name>     the account to import into (created if it is new)
  --format <format>    ndjson (.ndjson, .jsonl), csv (.csv), or pages (.json: GET /api/submission
                       answers, one or more per file); by default from the file's extension
  --skip-invalid       import the valid records of files that also have invalid ones
${DATABASE_HELP}
  -h, --help           show this help

A progress bar is drawn on stderr when it is a terminal.`;

const FORMAT_BY_EXTENSION: Record<string, ImportFormat> = { ".ndjson": "ndjson", ".jsonl": "ndjson", ".csv": "csv", ".json": "pages" };

/** Records per store call: one transaction each, a few hundred KB of SQL parameters. */
const BATCH_SIZE = 1000;
const ERRORS_SHOWN = 20;

export async function importCommand(args: string[], io: Io): Promise<number> {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: {
      account: { type: "string" },
      format: { type: "string" },
      "skip-invalid": { type: "boolean" },
      db: { type: "string" },
      help: { type: "boolean", short: "h" },
    },
  });
  if (values.help) {
    io.stdout(HELP);
    return EXIT_OK;
  }
  if (!values.account) throw new UsageError("import needs --account NAME");
  if (positionals.length === 0) throw new UsageError("import needs at least one FILE");
  const files = positionals.map((path) => ({ path, format: formatOf(path, values.format) }));

  // First pass: every record checked, nothing written.
  let valid = 0;
  let invalid = 0;
  let adjusted = 0;
  for (const file of files) {
    for await (const record of readSubmissions(file.format, readTextFile(file.path), DEFAULT_LIMITS)) {
      if ("error" in record) {
        if (++invalid <= ERRORS_SHOWN) io.stderr(`${where(file.path, record)}: ${record.error}`);
        continue;
      }
      valid++;
      if (record.adjusted && ++adjusted <= ERRORS_SHOWN) io.stderr(`${where(file.path, record)}: ${record.adjusted}`);
    }
  }
  if (invalid > ERRORS_SHOWN) io.stderr(`... and ${invalid - ERRORS_SHOWN} more invalid record${invalid - ERRORS_SHOWN === 1 ? "" : "s"}`);
  if (invalid > 0 && !values["skip-invalid"]) {
    io.stderr(
      `${count(invalid, "invalid record", "invalid records")}: nothing was imported. Fix ${invalid === 1 ? "it" : "them"}` +
        (valid === 0 ? "; no record is valid." : `, or pass --skip-invalid to import the ${count(valid, "valid one", "valid ones")}.`),
    );
    return EXIT_FAILURE;
  }

  // Second pass: the valid records, in batches.
  const store = await openDatabase(databaseUrl(values.db, io.env), io);
  try {
    const account = await store.ensureAccount(values.account);
    const progress = progressBar(io.stderrTerminal, "import", valid);
    let done = 0;
    let inserted = 0;
    let batch: Submission[] = [];
    // One batch in the store while the next is read and parsed (for a database server, that
    // overlaps its work with ours), and batches go in one after another, in file order.
    let storing: Promise<void> = Promise.resolve();
    /** The database refused a batch: the ones before it stay (each is all or nothing). */
    let refused = false;
    const flush = async () => {
      await storing;
      const sending = batch;
      batch = [];
      storing = store.importSubmissions(account.id, sending).then((count) => {
        inserted += count;
        done += sending.length;
        progress.update(done);
      });
      // Awaited by the next flush or at the end, which throw its failure; not unhandled meanwhile.
      storing.catch(() => (refused = true));
    };
    try {
      for (const file of files) {
        for await (const record of readSubmissions(file.format, readTextFile(file.path), DEFAULT_LIMITS)) {
          if ("error" in record) continue;
          batch.push(record.submission);
          if (batch.length >= BATCH_SIZE) await flush();
        }
      }
      await flush();
      await storing;
    } catch (error) {
      // What an operator needs after a full disk or a lock midway: how far it got, and that
      // running it again is safe (the ids already there are skipped).
      if (refused) {
        progress.finish();
        io.stderr(`Stopped: the database refused a batch after ${count(done, "record", "records")} of ${valid.toLocaleString("en-US")} went in (${inserted.toLocaleString("en-US")} new). Run the same import again once fixed: what went in is skipped.`);
      }
      throw error;
    }
    progress.finish();
    const notes = [
      `${(done - inserted).toLocaleString("en-US")} already there`,
      ...(invalid > 0 ? [`${count(invalid, "invalid record", "invalid records")} skipped`] : []),
      ...(adjusted > 0 ? [`${count(adjusted, "device", "devices")} mapped`] : []),
    ];
    io.stderr(`Imported ${count(inserted, "new submission", "new submissions")} into account "${account.name}" (${notes.join(", ")}).`);
    return EXIT_OK;
  } finally {
    await store.close();
  }
}

function formatOf(path: string, flag: string | undefined): ImportFormat {
  if (flag !== undefined) {
    if (!(IMPORT_FORMATS as readonly string[]).includes(flag)) throw new UsageError(`--format must be ${IMPORT_FORMATS.join(", ")} (got "${flag}")`);
    return flag as ImportFormat;
  }
  const format = FORMAT_BY_EXTENSION[extname(path).toLowerCase()];
  if (!format) throw new UsageError(`cannot tell the format of ${path} from its extension; pass --format ${IMPORT_FORMATS.join("|")}`);
  return format;
}

function where(path: string, record: ImportRecord): string {
  return `${path}:${record.line}${record.where ? ` ${record.where}` : ""}`;
}

function count(n: number, one: string, many: string): string {
  return `${n.toLocaleString("en-US")} ${n === 1 ? one : many}`;
}

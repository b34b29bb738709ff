import { open, rename, rm } from "node:fs/promises";
import { parseArgs } from "node:util";
import { openExport } from "../../src/export/export.ts";
import { HttpError } from "../../src/http/errors.ts";
import { exportQuery } from "../../src/schemas.ts";
import { validate } from "../../src/validate.ts";
import { DATABASE_HELP, databaseUrl, openDatabase } from "../database.ts";
import { progressBar } from "../progress.ts";
import { CommandError, EXIT_OK, type Io, UsageError } from "../usage.ts";

const HELP = `Export an account's submissions as CSV or NDJSON, straight from the database.

Usage:
  formsink export --account NAME [--format csv|ndjson] [--output FILE] [filters]

Options:
  --account <name>          the account to export (required)
  --format <csv|ndjson>     default csv: a header row, one column per field and per data key
  --output <file>           write here (default: stdout); written as <file>.partial, renamed when complete
  --popup-id <id>           filters, as on GET /api/submission
  --domain <domain>
  --device <device>
  --status <pending|completed>
  --created-after <instant>   exclusive, ISO 8601 such as 2025-07-12T10:30:00Z
  --created-before <instant>  exclusive
  --order-by <created_at|created_at_desc>   default created_at_desc (newest first)
${DATABASE_HELP}
  -h, --help                show this help

A progress bar is drawn on stderr when it is a terminal.`;

/** Flags that are query parameters of the export, under their API names. */
const FILTER_FLAGS = {
  "popup-id": "popupId",
  domain: "domain",
  device: "device",
  status: "status",
  "created-after": "createdAfter",
  "created-before": "createdBefore",
  "order-by": "orderBy",
  format: "format",
} as const;

export async function exportCommand(args: string[], io: Io): Promise<number> {
  const { values } = parseArgs({
    args,
    options: {
      account: { type: "string" },
      output: { type: "string" },
      db: { type: "string" },
      help: { type: "boolean", short: "h" },
      ...Object.fromEntries(Object.keys(FILTER_FLAGS).map((flag) => [flag, { type: "string" as const }])),
    },
  });
  if (values.help) {
    io.stdout(HELP);
    return EXIT_OK;
  }
  if (!values.account) throw new UsageError("export needs --account NAME");
  const query: Record<string, string> = {};
  for (const [flag, parameter] of Object.entries(FILTER_FLAGS)) {
    const value = (values as Record<string, string | undefined>)[flag];
    if (value !== undefined) query[parameter] = value;
  }
  const { format, orderBy, ...filter } = asUsageError(() => validate(exportQuery, query, "query"));

  const store = await openDatabase(databaseUrl(values.db, io.env), io);
  try {
    const account = await store.findAccount(values.account);
    if (!account) throw new CommandError(`no account named "${values.account}"`);
    const order = orderBy === "created_at" ? "asc" : "desc";
    const { total } = await store.listSubmissions(account.id, { ...filter, order, limit: 1, offset: 0 });
    const progress = progressBar(io.stderrTerminal, "export", total);
    let rows = 0;
    const onProgress = (written: number) => {
      rows = written;
      progress.update(written);
    };
    const body = await openExport(store, account.id, { format, filter, order, onProgress }).catch((error) => {
      throw error instanceof HttpError ? new CommandError(flagNames(error.message)) : error;
    });
    await (values.output ? writeFile(body, values.output) : writeStdout(body, io));
    progress.finish();
    io.stderr(`Exported ${rows.toLocaleString("en-US")} submission${rows === 1 ? "" : "s"} of account "${account.name}" as ${format}${values.output ? ` to ${values.output}` : ""}.`);
    return EXIT_OK;
  } finally {
    await store.close();
  }
}

async function writeStdout(body: ReadableStream<Uint8Array>, io: Io): Promise<void> {
  for await (const chunk of body) await io.writeStdout(chunk);
}

/** Written next to the target and renamed when complete, so a failed export leaves no half a file under its name. */
async function writeFile(body: ReadableStream<Uint8Array>, path: string): Promise<void> {
  const partial = `${path}.partial`;
  // The file's own failures (a full disk, a quota) in one line; the database's pass as they are.
  const cannotWrite = (error: Error) => {
    throw new CommandError(`cannot write ${path}: ${error.message}`);
  };
  const file = await open(partial, "w").catch(cannotWrite);
  try {
    for await (const chunk of body) await file.write(chunk).catch(cannotWrite);
    await file.close().catch(cannotWrite);
    await rename(partial, path);
  } catch (error) {
    await file.close().catch(() => {});
    await rm(partial, { force: true });
    throw error;
  }
}

function asUsageError<T>(run: () => T): T {
  try {
    return run();
  } catch (error) {
    throw error instanceof HttpError ? new UsageError(flagNames(error.message)) : error;
  }
}

/** A message about query parameters, naming the command's flags instead. */
function flagNames(message: string): string {
  let text = message;
  for (const [flag, parameter] of Object.entries(FILTER_FLAGS)) text = text.replaceAll(new RegExp(`\\b${parameter}\\b`, "g"), `--${flag}`);
  return text;
}

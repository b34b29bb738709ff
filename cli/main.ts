import { DatabaseError, storageProblem } from "./database.ts";
import { backupCommand, restoreCommand } from "./commands/backup.ts";
import { eraseCommand, erasuresCommand } from "./commands/erase.ts";
import { exportCommand } from "./commands/export.ts";
import { healthCommand } from "./commands/health.ts";
import { importCommand } from "./commands/import.ts";
import { keysCommand } from "./commands/keys.ts";
import { serveCommand } from "./commands/serve.ts";
import { webhooksCommand } from "./commands/webhooks.ts";
import { CommandError, EXIT_FAILURE, EXIT_OK, EXIT_STORAGE, EXIT_USAGE, type Io, UsageError, VERSION } from "./usage.ts";

const HELP = `formsink - form submissions from website popups

Usage:
  formsink serve [--port N] [--host H] [--db URL] [--trust-proxy N] [--rate-limits WHERE]
                 [--log-format json|pretty] [--metrics [HOST:]PORT] [--config FILE]
  formsink keys create --account NAME [--kind K] [--domain HOST]...
  formsink keys list [--account NAME] [--json]
  formsink keys revoke PREFIX-OR-ID
  formsink webhooks add|list|remove|rotate-secret|deliveries|retry|replay --account NAME ...
  formsink export --account NAME [--format csv|ndjson] [--output FILE] [filters]
  formsink import --account NAME [--skip-invalid] FILE...
  formsink erase --account NAME --field email --value VALUE [--dry-run]
  formsink erasures list --account NAME [--field email --value VALUE]
  formsink backup --output FILE [--db URL] [--force]
  formsink restore --input FILE [--db URL] [--force]
  formsink health [--url URL] [--timeout SECONDS]
  formsink --version

Run "formsink <command> --help" for a command's options.`;

const COMMANDS: Record<string, (args: string[], io: Io) => Promise<number>> = {
  serve: serveCommand,
  keys: keysCommand,
  webhooks: webhooksCommand,
  export: exportCommand,
  import: importCommand,
  erase: eraseCommand,
  erasures: erasuresCommand,
  backup: backupCommand,
  restore: restoreCommand,
  health: healthCommand,
};

/** Runs the command line `args` and returns the exit code; everything for people goes to stderr. */
export async function main(args: string[], io: Io = processIo()): Promise<number> {
  const [name, ...rest] = args;
  if (name === undefined || name === "--help" || name === "-h" || name === "help") {
    (name === undefined ? io.stderr : io.stdout)(HELP);
    return name === undefined ? EXIT_USAGE : EXIT_OK;
  }
  if (name === "--version" || name === "-v") {
    io.stdout(VERSION);
    return EXIT_OK;
  }
  const command = COMMANDS[name];
  try {
    if (!command) throw new UsageError(`unknown command "${name}"`);
    return await command(rest, io);
  } catch (error) {
    if (error instanceof UsageError || (error instanceof TypeError && "code" in error && String(error.code).startsWith("ERR_PARSE_ARGS"))) {
      io.stderr(`formsink: ${error.message}\nRun "formsink ${command ? `${name} ` : ""}--help" for usage.`);
      return EXIT_USAGE;
    }
    if (error instanceof DatabaseError || error instanceof CommandError) {
      io.stderr(`formsink: ${error.message}`);
      return error instanceof DatabaseError && error.storage ? EXIT_STORAGE : EXIT_FAILURE;
    }
    // The database failing after it opened (a corrupt page that only a query reaches).
    const storage = storageProblem(error);
    if (storage !== undefined) {
      io.stderr(`formsink: database error: ${storage}`);
      return EXIT_STORAGE;
    }
    throw error;
  }
}

function processIo(): Io {
  return {
    stdout: (line) => process.stdout.write(`${line}\n`),
    stderr: (line) => process.stderr.write(`${line}\n`),
    env: process.env,
    writeStdout: (chunk) =>
      new Promise((resolve, reject) => {
        process.stdout.write(chunk, (error) => (error ? reject(error) : resolve()));
      }),
    stderrTerminal: process.stderr.isTTY
      ? { write: (text) => void process.stderr.write(text), get columns() { return process.stderr.columns || 80; } }
      : undefined,
  };
}

import { DatabaseError, storageProblem } from "./database.ts";
import { CommandError, EXIT_FAILURE, EXIT_OK, EXIT_STDOUT_CLOSED, EXIT_STORAGE, EXIT_USAGE, type Io, StdoutClosed, UsageError, VERSION } from "./usage.ts";

const HELP = `formsink - form submissions from website popups

Usage:
  formsink serve [--port N] [--host H] [--db URL] [--trust-proxy N] [--rate-limits WHERE]
                 [--log-format json|pretty] [--metrics [HOST:]PORT] [--config FILE]
  formsink keys create --account NAME [--kind K] [--domain HOST]...
  formsink keys list [--account NAME] [--json]
  formsink keys revoke PREFIX-OR-ID
  formsink webhooks add|list|remove|rotate-secret|deliveries|retry|replay --account NAME ...
  formsink export --account NAME [--format csv|ndjson] [--output FILE] [filters]
  formsink import --account NAME [--format ndjson|csv|pages] [--skip-invalid] FILE...
  formsink erase --account NAME --field email --value VALUE [--dry-run]
  formsink erasures list --account NAME [--field email --value VALUE]
  formsink backup --output FILE [--db URL] [--force]
  formsink restore --input FILE [--db URL] [--force]
  formsink health [--url URL] [--timeout SECONDS]
  formsink --version

Run "formsink <command> --help" for a command's options.`;

type Command = (args: string[], io: Io) => Promise<number>;

/**
 * Each command's module is loaded only when it runs: `serve` starts sooner and holds less
 * memory without the modules only other commands use (bench/README.md, cold start).
 */
const COMMANDS: Record<string, () => Promise<Command>> = {
  serve: () => import("./commands/serve.ts").then((m) => m.serveCommand),
  keys: () => import("./commands/keys.ts").then((m) => m.keysCommand),
  webhooks: () => import("./commands/webhooks.ts").then((m) => m.webhooksCommand),
  export: () => import("./commands/export.ts").then((m) => m.exportCommand),
  import: () => import("./commands/import.ts").then((m) => m.importCommand),
  erase: () => import("./commands/erase.ts").then((m) => m.eraseCommand),
  erasures: () => import("./commands/erase.ts").then((m) => m.erasuresCommand),
  backup: () => import("./commands/backup.ts").then((m) => m.backupCommand),
  restore: () => import("./commands/backup.ts").then((m) => m.restoreCommand),
  health: () => import("./commands/health.ts").then((m) => m.healthCommand),
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
    return await (await command())(rest, io);
  } catch (error) {
    if (error instanceof UsageError || (error instanceof TypeError && "code" in error && String(error.code).startsWith("ERR_PARSE_ARGS"))) {
      io.stderr(`formsink: ${usageMessage(error)}\nRun "formsink ${command ? `${name} ` : ""}--help" for usage.`);
      return EXIT_USAGE;
    }
    // Not a failure to explain: the reader took what it wanted (`| head`); stop quietly.
    if (error instanceof StdoutClosed) return EXIT_STDOUT_CLOSED;
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

/**
 * The mistake alone: Node's parseArgs adds to "Unknown option '--x'" a hint on passing
 * '--x' as a positional after '--', which no formsink command takes, so it only misleads
 * someone who mistyped a flag.
 */
function usageMessage(error: Error): string {
  return error.message.split(". To specify a positional argument")[0]!;
}

function processIo(): Io {
  // A reader that stops early closes the pipe, and Node reports EPIPE as an 'error' event on
  // stdout, which unhandled ends the process with a stack trace. Lines written after that are
  // dropped; raw output (an export) stops the command (`StdoutClosed`).
  let stdoutClosed = false;
  process.stdout.on("error", (error: NodeJS.ErrnoException) => {
    if (error.code !== "EPIPE") throw error;
    stdoutClosed = true;
  });
  return {
    stdout: (line) => void (stdoutClosed || process.stdout.write(`${line}\n`)),
    stderr: (line) => process.stderr.write(`${line}\n`),
    env: process.env,
    writeStdout: (chunk) =>
      new Promise((resolve, reject) => {
        if (stdoutClosed) return reject(new StdoutClosed());
        process.stdout.write(chunk, (error) => (error ? reject(stdoutClosed || (error as NodeJS.ErrnoException).code === "EPIPE" ? new StdoutClosed() : error) : resolve()));
      }),
    stderrTerminal: process.stderr.isTTY
      ? { write: (text) => void process.stderr.write(text), get columns() { return process.stderr.columns || 80; } }
      : undefined,
  };
}

import { DatabaseError } from "./database.js";
import { keysCommand } from "./commands/keys.js";
import { serveCommand } from "./commands/serve.js";
import { EXIT_FAILURE, EXIT_OK, EXIT_USAGE, UsageError } from "./usage.js";
const HELP = `formsink - form submissions from website popups

Usage:
  formsink serve [--port N] [--host H] [--db URL]     serve the HTTP API
  formsink keys create --account NAME [--kind K] [--domain HOST]...
  formsink keys list [--account NAME] [--json]
  formsink keys revoke PREFIX-OR-ID

Run "formsink <command> --help" for a command's options.`;
const COMMANDS = {
    serve: serveCommand,
    keys: keysCommand,
};
/** Runs the command line `args` and returns the exit code; everything for people goes to stderr. */
export async function main(args, io = processIo()) {
    const [name, ...rest] = args;
    if (name === undefined || name === "--help" || name === "-h" || name === "help") {
        (name === undefined ? io.stderr : io.stdout)(HELP);
        return name === undefined ? EXIT_USAGE : EXIT_OK;
    }
    const command = COMMANDS[name];
    try {
        if (!command)
            throw new UsageError(`unknown command "${name}"`);
        return await command(rest, io);
    }
    catch (error) {
        if (error instanceof UsageError || (error instanceof TypeError && "code" in error && String(error.code).startsWith("ERR_PARSE_ARGS"))) {
            io.stderr(`formsink: ${error.message}\nRun "formsink ${command ? `${name} ` : ""}--help" for usage.`);
            return EXIT_USAGE;
        }
        if (error instanceof DatabaseError) {
            io.stderr(`formsink: ${error.message}`);
            return EXIT_FAILURE;
        }
        throw error;
    }
}
function processIo() {
    return {
        stdout: (line) => process.stdout.write(`${line}\n`),
        stderr: (line) => process.stderr.write(`${line}\n`),
        env: process.env,
    };
}

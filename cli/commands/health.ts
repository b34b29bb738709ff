import { parseArgs } from "node:util";
import { BadValue } from "../config.ts";
import { CommandError, EXIT_OK, type Io, messageOf, UsageError } from "../usage.ts";
import { parsePort } from "./serve.ts";

const HELP = `Ask a running formsink server whether it is healthy (GET /api/health): exit 0 when it
answers 2xx, 1 otherwise. For container health checks and monitoring scripts.

Usage:
  formsink health [--url URL] [--timeout SECONDS]

Options:
  --url <url>   the health endpoint (default http://127.0.0.1:$PORT/api/health, PORT
                defaulting to 8787 as for serve)
  --timeout <s> seconds to wait for the answer (default 5)
  -h, --help    show this help`;

export async function healthCommand(args: string[], io: Io): Promise<number> {
  const { values } = parseArgs({ args, options: { url: { type: "string" }, timeout: { type: "string" }, help: { type: "boolean", short: "h" } } });
  if (values.help) {
    io.stdout(HELP);
    return EXIT_OK;
  }
  const url = values.url ?? `http://127.0.0.1:${portFromEnv(io.env.PORT)}/api/health`;
  if (!/^https?:\/\/[^/]/.test(url)) throw new UsageError(`--url must be an http:// or https:// URL (got "${url}")`);
  const timeout = values.timeout ?? "5";
  if (!/^\d{1,3}$/.test(timeout) || Number(timeout) === 0) throw new UsageError(`--timeout must be a whole number of seconds from 1 to 999 (got "${timeout}")`);

  let response: Response;
  try {
    response = await fetch(url, { signal: AbortSignal.timeout(Number(timeout) * 1000) });
  } catch (error) {
    const cause = error instanceof Error && error.cause instanceof Error ? error.cause : error;
    throw new CommandError(`${url}: no answer (${messageOf(cause)})`);
  }
  const body = (await response.text()).trim();
  if (!response.ok) throw new CommandError(`${url}: ${response.status} ${body}`.trimEnd());
  io.stdout(body);
  return EXIT_OK;
}

function portFromEnv(text: string | undefined): number {
  if (text === undefined) return 8787;
  try {
    return parsePort(text);
  } catch (error) {
    if (error instanceof BadValue) throw new UsageError(`PORT ${error.message} (got "${text}")`);
    throw error;
  }
}

import { createSubmissionsHandler } from "../../src/handler.ts";
import type { LogEntry } from "../../src/options.ts";
import { forwardedForAddress } from "../../src/rate-limit/client-address.ts";
import { storeRateLimiter } from "../../src/rate-limit/limiter.ts";
import { DEFAULT_DATABASE_URL, isInMemory } from "../../src/stores/libsql/options.ts";
import { BadValue, resolveSettings, setting, settingsHelp } from "../config.ts";
import { DATABASE_SETTING, displayUrl, openDatabase } from "../database.ts";
import { runtimeServer } from "../server.ts";
import { EXIT_OK, type Io, UsageError, VERSION } from "../usage.ts";

/** How people run this command: the single binary by its name, the npm package through npx. */
const COMMAND = import.meta.url.startsWith("file:///$bunfs/") ? "formsink" : "npx formsink";

/** Every setting of `formsink serve`: a flag, its env twin and config key, parser, default and help. */
export const SERVE_SETTINGS = {
  port: setting({
    flag: "port",
    env: "PORT",
    valueName: "<n>",
    default: () => 8787,
    defaultText: "8787",
    help: "port to listen on, 0 for any free one",
    parse: parsePort,
  }),
  host: setting({
    flag: "host",
    env: "HOST",
    valueName: "<h>",
    default: () => "127.0.0.1",
    defaultText: "127.0.0.1",
    help: "interface to listen on (0.0.0.0 for all)",
    parse: (text) => {
      if (!/^[0-9A-Za-z.:[\]-]+$/.test(text)) throw new BadValue("must be an IP address or a host name, such as 127.0.0.1 or 0.0.0.0");
      return text;
    },
  }),
  db: DATABASE_SETTING,
  trustProxy: setting({
    flag: "trust-proxy",
    env: "FORMSINK_TRUST_PROXY",
    valueName: "<n>",
    default: () => 0,
    defaultText: "0 (X-Forwarded-For is ignored)",
    help: "the server is behind n reverse proxies that append to X-Forwarded-For:\nrate limits count the address the outermost one saw",
    parse: (text) => {
      if (!/^\d{1,2}$/.test(text)) throw new BadValue("must be a whole number of proxies, such as 1");
      return Number(text);
    },
  }),
  rateLimits: setting({
    flag: "rate-limits",
    env: "FORMSINK_RATE_LIMITS",
    valueName: "<where>",
    default: () => "memory" as "memory" | "database",
    defaultText: "memory",
    help: 'count rate limits in "memory" (this process) or the "database"\n(shared by every server on it)',
    parse: (text) => {
      if (text !== "memory" && text !== "database") throw new BadValue("must be memory or database");
      return text;
    },
  }),
};

const HELP = `Serve the formsink HTTP API on an embedded libSQL database (or a remote one), with
the server of the runtime it runs in: Node, Bun or Deno.

Usage:
  formsink serve [options]

Options (a flag wins over its environment variable, which wins over the config file):
${settingsHelp(SERVE_SETTINGS)}
  -h, --help    show this help

Creates with a publishable key are limited to 30 per minute per key and client address.
The database's schema is brought up to date at start (back it up before an upgrade).

Stops gracefully on SIGINT/SIGTERM: no new connections, in-flight requests finish, then the
database is closed.`;

export async function serveCommand(args: string[], io: Io): Promise<number> {
  const settings = resolveSettings(SERVE_SETTINGS, args, io.env);
  if (settings.help) {
    io.stdout(HELP);
    return EXIT_OK;
  }
  const { port, host: hostname, db: url, trustProxy: trustedProxies, rateLimits } = settings.values;

  const { runtime, serve } = await runtimeServer();
  const store = await openDatabase(url, io);
  const handler = createSubmissionsHandler(store, {
    log: (entry) => io.stderr(formatLogEntry(entry)),
    clientAddress: trustedProxies > 0 ? forwardedForAddress(trustedProxies) : undefined,
    rateLimit: { limiter: rateLimits === "database" ? storeRateLimiter(store) : undefined },
  });
  const server = await serve(handler, { port, hostname }).catch(async (error: NodeJS.ErrnoException) => {
    await store.close();
    throw new UsageError(`cannot listen on ${hostname}:${port}: ${error.code ?? error.message}`);
  });
  // Listening from here on: a signal must find its handler even while the lines below print.
  const stopped = new Promise<void>((resolve) => {
    const stop = (signal: string) => {
      io.stderr(`${signal}: finishing in-flight requests, then closing the database`);
      server.close().then(resolve, resolve);
    };
    process.once("SIGINT", stop);
    process.once("SIGTERM", stop);
  });
  io.stdout(`formsink ${VERSION} serving ${server.url} (database ${displayUrl(url)}, ${runtime})`);
  if (isInMemory(url)) {
    io.stderr(
      "The database is in memory: it starts empty, is gone when the server stops, and no other\n" +
        "process (such as `formsink keys create`) can reach it. Embed the handler to use it with\n" +
        "keys made in code, or serve a file: URL (the default) to keep data and make keys.",
    );
  } else if ((await store.listApiKeys()).length === 0) {
    const dbFlag = url === DEFAULT_DATABASE_URL ? "" : ` --db ${displayUrl(url)}`;
    io.stderr(
      "No API keys yet. Create your first one (it is printed once - keep it):\n" +
        `  ${COMMAND} keys create --account my-site${dbFlag}`,
    );
  }

  await stopped;
  await store.close();
  return EXIT_OK;
}

export function parsePort(text: string): number {
  const port = /^\d{1,5}$/.test(text) ? Number(text) : NaN;
  if (!(port >= 0 && port <= 65535)) throw new BadValue("must be a whole number from 0 to 65535");
  return port;
}

/** One line per request for people tailing the log; unexpected errors with their stack. */
function formatLogEntry(entry: LogEntry): string {
  if (entry.type === "request") {
    return `${new Date().toISOString()} ${entry.method} ${entry.path} ${entry.status} ${entry.durationMs.toFixed(1)}ms`;
  }
  const detail = entry.error instanceof Error ? (entry.error.stack ?? entry.error.message) : String(entry.error);
  return `${new Date().toISOString()} ERROR ${entry.method} ${entry.path}: ${detail}`;
}

import { parseArgs } from "node:util";
import { createSubmissionsHandler } from "../../src/handler.ts";
import { forwardedForAddress } from "../../src/rate-limit/client-address.ts";
import { storeRateLimiter } from "../../src/rate-limit/limiter.ts";
import { DEFAULT_DATABASE_URL, isInMemory } from "../../src/stores/libsql/index.ts";
import { DATABASE_HELP, databaseUrl, displayUrl, openDatabase } from "../database.ts";
import { createServerLog, logFormat } from "../logging.ts";
import { createServerMetrics, metricsAddress, metricsHandler } from "../metrics.ts";
import { runtimeServer } from "../server.ts";
import { EXIT_OK, type Io, UsageError } from "../usage.ts";

const HELP = `Serve the formsink HTTP API on an embedded libSQL database (or a remote one), with
the server of the runtime it runs in: Node, Bun or Deno.

Usage:
  formsink serve [--port N] [--host H] [--db URL] [--trust-proxy N] [--rate-limits WHERE]
                 [--log-format json|pretty] [--metrics [HOST:]PORT]

Options:
  --port <n>    port to listen on, 0 for any free one (default 8787)   [env PORT]
  --host <h>    interface to listen on (default 127.0.0.1; 0.0.0.0 for all)   [env HOST]
${DATABASE_HELP}
  --trust-proxy <n>
                the server is behind n reverse proxies that append to X-Forwarded-For:
                rate limits count the address the outermost one saw (default 0: the
                connection's address; X-Forwarded-For is ignored)   [env FORMSINK_TRUST_PROXY]
  --rate-limits <where>
                count rate limits in "memory" (default: this process) or the "database"
                (shared by every server on it)   [env FORMSINK_RATE_LIMITS]
  --log-format <f>
                "json": one pino-compatible JSON object per line on stderr; "pretty": short
                lines (default: pretty when stderr is a terminal, else json)   [env FORMSINK_LOG_FORMAT]
  --metrics <[host:]port>
                serve Prometheus metrics at http://host:port/metrics, a listener apart from
                the API's (host defaults to 127.0.0.1; default: no metrics)   [env FORMSINK_METRICS]
  -h, --help    show this help

Creates with a publishable key are limited to 30 per minute per key and client address.

Stops gracefully on SIGINT/SIGTERM: no new connections, in-flight requests finish, then the
database is closed.`;

export async function serveCommand(args: string[], io: Io): Promise<number> {
  const { values } = parseArgs({
    args,
    options: {
      port: { type: "string" },
      host: { type: "string" },
      db: { type: "string" },
      "trust-proxy": { type: "string" },
      "rate-limits": { type: "string" },
      "log-format": { type: "string" },
      metrics: { type: "string" },
      help: { type: "boolean", short: "h" },
    },
  });
  if (values.help) {
    io.stdout(HELP);
    return EXIT_OK;
  }
  const port = parsePort(values.port ?? io.env.PORT ?? "8787");
  const hostname = values.host ?? io.env.HOST ?? "127.0.0.1";
  const url = databaseUrl(values.db, io.env);
  const trustedProxies = parseCount("--trust-proxy", values["trust-proxy"] ?? io.env.FORMSINK_TRUST_PROXY ?? "0");
  const rateLimits = values["rate-limits"] ?? io.env.FORMSINK_RATE_LIMITS ?? "memory";
  if (rateLimits !== "memory" && rateLimits !== "database") {
    throw new UsageError(`--rate-limits must be memory or database (got "${rateLimits}")`);
  }
  const log = createServerLog(logFormat(values["log-format"] ?? io.env.FORMSINK_LOG_FORMAT, io.stderrTerminal !== undefined), io.stderr);
  const metricsText = values.metrics ?? io.env.FORMSINK_METRICS;
  const metricsAt = metricsText === undefined ? undefined : metricsAddress(metricsText);
  const metrics = metricsAt && createServerMetrics();

  const { runtime, serve } = await runtimeServer();
  const store = await openDatabase(url, io.env);
  const handler = createSubmissionsHandler(metrics ? metrics.timeStore(store) : store, {
    log: metrics
      ? (entry) => {
          if (entry.type === "request") metrics.observeRequest(entry);
          log.entry(entry);
        }
      : log.entry,
    clientAddress: trustedProxies > 0 ? forwardedForAddress(trustedProxies) : undefined,
    rateLimit: { limiter: rateLimits === "database" ? storeRateLimiter(store) : undefined },
  });
  const server = await serve(handler, { port, hostname }).catch(async (error: NodeJS.ErrnoException) => {
    await store.close();
    throw new UsageError(`cannot listen on ${hostname}:${port}: ${error.code ?? error.message}`);
  });
  const metricsServer = metricsAt && (await serve(metricsHandler(metrics!), metricsAt).catch(async (error: NodeJS.ErrnoException) => {
    await Promise.all([server.close(), store.close()]);
    throw new UsageError(`cannot listen on ${metricsAt.hostname}:${metricsAt.port} for --metrics: ${error.code ?? error.message}`);
  }));
  // Listening from here on: a signal must find its handler even while the lines below print.
  const stopped = new Promise<void>((resolve) => {
    const stop = (signal: string) => {
      log.info(`${signal}: finishing in-flight requests, then closing the database`);
      Promise.all([server.close(), metricsServer?.close()]).then(() => resolve(), () => resolve());
    };
    process.once("SIGINT", stop);
    process.once("SIGTERM", stop);
  });
  io.stdout(`formsink serving ${server.url} (database ${displayUrl(url)}, ${runtime})`);
  if (metricsServer) log.info(`metrics at ${metricsServer.url}/metrics`);
  if (isInMemory(url)) {
    log.warn(
      "The database is in memory: it starts empty, is gone when the server stops, and no other\n" +
        "process (such as `formsink keys create`) can reach it. Embed the handler to use it with\n" +
        "keys made in code, or serve a file: URL (the default) to keep data and make keys.",
    );
  } else if ((await store.listApiKeys()).length === 0) {
    const dbFlag = url === DEFAULT_DATABASE_URL ? "" : ` --db ${displayUrl(url)}`;
    log.warn(
      "No API keys yet. Create your first one (it is printed once - keep it):\n" +
        `  npx formsink keys create --account my-site${dbFlag}`,
    );
  }

  await stopped;
  await store.close();
  return EXIT_OK;
}

function parseCount(flag: string, text: string): number {
  if (!/^\d{1,2}$/.test(text)) throw new UsageError(`${flag} must be a whole number of proxies, such as 1 (got "${text}")`);
  return Number(text);
}

function parsePort(text: string): number {
  const port = /^\d{1,5}$/.test(text) ? Number(text) : NaN;
  if (!(port >= 0 && port <= 65535)) throw new UsageError(`--port must be a whole number from 0 to 65535 (got "${text}")`);
  return port;
}

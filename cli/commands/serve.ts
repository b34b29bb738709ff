import { DEFAULT_IDLE_TIMEOUT_MS, DEFAULT_MAX_CONNECTIONS } from "../../adapters/server.ts";
import { createWebhookTransport } from "../../adapters/webhook-transport.ts";
import { createEventPruner } from "../../src/event-pruning.ts";
import { DEFAULT_EVENT_RETENTION_DAYS } from "../../src/events.ts";
import { createSubmissionsHandler } from "../../src/handler.ts";
import { createRetentionJob } from "../../src/privacy/retention.ts";
import { forwardedForAddress } from "../../src/rate-limit/client-address.ts";
import { storeRateLimiter } from "../../src/rate-limit/limiter.ts";
import type { CompleteStore } from "../../src/store.ts";
import { DEFAULT_DATABASE_URL, isInMemory } from "../../src/stores/libsql/options.ts";
import { threadWriteLock } from "../../src/stores/libsql/thread-write-lock.ts";
import { createWebhookDispatcher, DEFAULT_ENDPOINT_CONCURRENCY, DEFAULT_LEASE_MS, DEFAULT_POLL_INTERVAL_MS, MIN_LEASE_MS } from "../../src/webhooks/dispatcher.ts";
import { BadValue, resolveSettings, setting, settingsHelp, wholeNumber } from "../config.ts";
import { DATABASE_SETTING, displayUrl, displayUrlLeavesOut, openDatabase } from "../database.ts";
import { createServerLog, parseLogFormat } from "../logging.ts";
import { createServerMetrics, metricsAddress, metricsHandler } from "../metrics.ts";
import { runtimeServer } from "../server.ts";
import { EXIT_OK, type Io, messageOf, UsageError, VERSION } from "../usage.ts";
import { startWebhookThread } from "../webhook-thread.ts";

/** How people run this command: the single binary by its name, the npm package through npx. */
const COMMAND = import.meta.url.startsWith("file:///$bunfs/") ? "formsink" : "npx formsink";

/** A port, as `--port` and `formsink health --url` take it. */
export const parsePort = wholeNumber(5, 0, 65535, "must be a whole number from 0 to 65535");

/**
 * The most first attempts of one endpoint serve lets be under way at once: the webhook thread
 * claims 128 deliveries at a time, so that two endpoints' windows still fit in one claim.
 */
const MAX_ENDPOINT_CONCURRENCY = 64;

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
    parse: wholeNumber(2, 0, 99, "must be a whole number of proxies, such as 1"),
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
  logFormat: setting({
    flag: "log-format",
    env: "FORMSINK_LOG_FORMAT",
    valueName: "<f>",
    // Undefined: the log's destination decides (a terminal gets pretty lines).
    default: () => undefined,
    defaultText: "pretty when stderr is a terminal, else json",
    help: '"json": one pino-compatible JSON object per line on stderr; "pretty": short lines',
    parse: parseLogFormat,
  }),
  eventRetentionDays: setting({
    flag: "event-retention-days",
    env: "FORMSINK_EVENT_RETENTION_DAYS",
    valueName: "<n>",
    default: () => DEFAULT_EVENT_RETENTION_DAYS,
    defaultText: String(DEFAULT_EVENT_RETENTION_DAYS),
    help: "days the change log (GET /api/events) keeps events; older ones are pruned hourly",
    parse: wholeNumber(5, 1, 99_999, "must be a whole number of days, at least 1"),
  }),
  metrics: setting({
    flag: "metrics",
    env: "FORMSINK_METRICS",
    valueName: "<[host:]port>",
    default: () => undefined,
    defaultText: "none (no metrics)",
    help: "serve Prometheus metrics at http://host:port/metrics, a listener apart from\nthe API's (host defaults to 127.0.0.1)",
    parse: metricsAddress,
  }),
  idleTimeout: setting({
    flag: "idle-timeout",
    env: "FORMSINK_IDLE_TIMEOUT",
    valueName: "<s>",
    default: () => DEFAULT_IDLE_TIMEOUT_MS / 1000,
    defaultText: String(DEFAULT_IDLE_TIMEOUT_MS / 1000),
    help: "seconds a connection may send and receive nothing before it is closed\n(Node and Bun)",
    parse: wholeNumber(3, 1, 999, "must be a whole number of seconds from 1 to 999"),
  }),
  maxConnections: setting({
    flag: "max-connections",
    env: "FORMSINK_MAX_CONNECTIONS",
    valueName: "<n>",
    default: () => DEFAULT_MAX_CONNECTIONS,
    defaultText: String(DEFAULT_MAX_CONNECTIONS),
    help: "connections open at once; more are closed at once (Node). Keep it below\nthe open-file limit (ulimit -n), which the database needs too",
    parse: wholeNumber(7, 1, 9_999_999, "must be a whole number of connections, such as 1000"),
  }),
  allowPrivateWebhooks: setting({
    flag: "allow-private-webhooks",
    env: "FORMSINK_ALLOW_PRIVATE_WEBHOOKS",
    kind: "switch",
    default: () => false,
    defaultText: "off",
    help: "deliver webhooks to http URLs and to loopback and private addresses too:\nfor local work only (docs/webhooks.md)",
    parse: (text) => text === "true",
  }),
  webhookLease: setting({
    flag: "webhook-lease",
    env: "FORMSINK_WEBHOOK_LEASE",
    valueName: "<s>",
    default: () => DEFAULT_LEASE_MS / 1000,
    defaultText: String(DEFAULT_LEASE_MS / 1000),
    help: "seconds a server holds a webhook delivery it took; a server that dies\nholding one leaves it to be sent again after this long",
    parse: wholeNumber(4, MIN_LEASE_MS / 1000, 3600, `must be a whole number of seconds from ${MIN_LEASE_MS / 1000} to 3600`),
  }),
  endpointConcurrency: setting({
    flag: "endpoint-concurrency",
    env: "FORMSINK_ENDPOINT_CONCURRENCY",
    valueName: "<n>",
    default: () => DEFAULT_ENDPOINT_CONCURRENCY,
    defaultText: String(DEFAULT_ENDPOINT_CONCURRENCY),
    help: "of one webhook endpoint, how many first attempts may be under way at once\n(started in commit order); 1 sends one after another",
    parse: wholeNumber(2, 1, MAX_ENDPOINT_CONCURRENCY, `must be a whole number from 1 to ${MAX_ENDPOINT_CONCURRENCY}`),
  }),
  webhookPoll: setting({
    flag: "webhook-poll",
    env: "FORMSINK_WEBHOOK_POLL",
    valueName: "<s>",
    default: () => DEFAULT_POLL_INTERVAL_MS / 1000,
    defaultText: String(DEFAULT_POLL_INTERVAL_MS / 1000),
    help: "seconds between the webhook dispatcher's looks for deliveries that other\nservers or the CLI committed; this server's own changes wake it at once",
    parse: wholeNumber(4, 1, 3600, "must be a whole number of seconds from 1 to 3600"),
  }),
};

const HELP = `Serve the formsink HTTP API on an embedded libSQL database (or a remote one, or
PostgreSQL), with the server of the runtime it runs in: Node, Bun or Deno.

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
  const {
    port, host: hostname, db: url, trustProxy: trustedProxies, rateLimits, logFormat, metrics: metricsAt, idleTimeout, maxConnections, eventRetentionDays,
    allowPrivateWebhooks, webhookLease, endpointConcurrency, webhookPoll,
  } = settings.values;
  const log = createServerLog(logFormat ?? (io.stderrTerminal !== undefined ? "pretty" : "json"), io.stderr);
  const metrics = metricsAt && createServerMetrics();

  const { runtime, serve } = await runtimeServer();
  // Schema upgrades are announced in the server's log, in its format.
  // Shared with the webhook thread's connection: see thread-write-lock.ts.
  const writeLock = threadWriteLock();
  const store = await openDatabase(url, { env: io.env, stderr: log.info, connection: { writeLock } });
  // Read before listening: a database that fails its first query (a corrupt page) is refused
  // at start, not after the server said it was serving.
  const noKeys = await (isInMemory(url) ? Promise.resolve(false) : store.listApiKeys().then((keys) => keys.length === 0)).catch(async (error) => {
    await store.close();
    throw error;
  });
  // Webhook deliveries go out from this process, woken by every change it commits and polling
  // for the changes other servers on the database commit: from a thread of its own on its own
  // connection, or beside the handler for an in-memory database, which no other thread reaches.
  const deliveries = startDeliveries(store, url, io.env, {
    allowPrivate: allowPrivateWebhooks,
    leaseMs: webhookLease * 1000,
    endpointConcurrency: endpointConcurrency,
    pollIntervalMs: webhookPoll * 1000,
    writeLock: writeLock.buffer,
  }, log);
  const handler = createSubmissionsHandler(metrics ? metrics.timeStore(store) : store, {
    onChange: deliveries.wake,
    allowPrivateWebhooks,
    log: metrics
      ? (entry) => {
          if (entry.type === "request") metrics.observeRequest(entry);
          log.entry(entry);
        }
      : log.entry,
    clientAddress: trustedProxies > 0 ? forwardedForAddress(trustedProxies) : undefined,
    rateLimit: { limiter: rateLimits === "database" ? storeRateLimiter(store) : undefined },
  });
  // The server's own failures (an answer that failed after its head went out, such as an export
  // whose database read failed midway: its client gets a cut transfer) go into the log, in its format.
  const onError = (error: unknown) => log.error(`a response failed: ${messageOf(error)}`, error);
  const server = await serve(handler, { port, hostname, idleTimeoutMs: idleTimeout * 1000, maxConnections, onError }).catch(async (error: NodeJS.ErrnoException) => {
    await store.close();
    throw new UsageError(`cannot listen on ${hostname}:${port}: ${error.code ?? error.message}`);
  });
  const metricsServer = metricsAt && (await serve(metricsHandler(metrics!), metricsAt).catch(async (error: NodeJS.ErrnoException) => {
    await Promise.all([server.close(), store.close()]);
    throw new UsageError(`cannot listen on ${metricsAt.hostname}:${metricsAt.port} for --metrics: ${error.code ?? error.message}`);
  }));
  const pruner = createEventPruner(store, {
    retentionDays: eventRetentionDays,
    onError: (error) => log.warn(`pruning old events failed (tried again within the hour): ${messageOf(error)}`),
  });
  // Retention rules are enforced from here, hourly (see docs/privacy.md).
  const retention = createRetentionJob(store, {
    log: (entry) => (entry.type === "retention" ? log.info(`retention: deleted ${entry.deleted} submissions`) : log.warn(`retention failed: ${String(entry.error)}`)),
  });
  const jobsStart = startJobsSoon(() => {
    pruner.start();
    retention.start();
  });
  // Listening from here on: a signal must find its handler even while the lines below print.
  const stopped = new Promise<void>((resolve) => {
    const stop = (signal: string) => {
      log.info(`${signal}: finishing in-flight requests, then closing the database`);
      Promise.all([server.close(), metricsServer?.close()]).then(() => resolve(), () => resolve());
    };
    process.once("SIGINT", stop);
    process.once("SIGTERM", stop);
  });
  io.stdout(`formsink ${VERSION} serving ${server.url} (database ${displayUrl(url)}, ${runtime})`);
  if (metricsServer) log.info(`metrics at ${metricsServer.url}/metrics`);
  if (isInMemory(url)) {
    log.warn(
      "The database is in memory: it starts empty, is gone when the server stops, and no other\n" +
        "process (such as `formsink keys create`) can reach it. Embed the handler to use it with\n" +
        "keys made in code, or serve a file: URL (the default) to keep data and make keys.",
    );
  } else if (noKeys) {
    // The URL as shown without its password or query would not open the database: the hint
    // then names the setting that carries it whole instead.
    const leavesOut = displayUrlLeavesOut(url);
    const dbFlag = url === DEFAULT_DATABASE_URL || leavesOut ? "" : ` --db ${displayUrl(url)}`;
    log.warn(
      `No API keys yet. Create your first one (it is printed once - keep it)${leavesOut ? ", with FORMSINK_DB set to this server's database URL" : ""}:\n` +
        `  ${COMMAND} keys create --account my-site${dbFlag}`,
    );
  }

  await stopped;
  clearTimeout(jobsStart);
  await retention.stop();
  pruner.stop();
  await deliveries.stop();
  await store.close();
  // Says the stop is done, not only begun: after it the database is whole (operations.md, Stopping).
  log.info("stopped: every request answered, the database closed");
  return EXIT_OK;
}

/**
 * How long after it listens serve first prunes the change log and applies the retention rules:
 * a prune of a large log is a write of milliseconds, which at once would stand between a
 * server's first requests and their answers (bench/README.md, cold-start.ts).
 */
const START_JOBS_AFTER_MS = 1000;

/** Runs `start` once the server has had `START_JOBS_AFTER_MS` for its first answers. */
function startJobsSoon(start: () => void): ReturnType<typeof setTimeout> {
  return setTimeout(start, START_JOBS_AFTER_MS);
}

interface Deliveries {
  wake(): void;
  stop(): Promise<void>;
}

/**
 * The webhook dispatcher: in a thread of its own (../webhook-thread.ts) unless the database is
 * in memory, or beside the handler when the thread does not start (the log says why). The
 * thread, a second JavaScript engine instance with its own connection, starts once the database
 * has an enabled endpoint, so that a server without webhooks never carries it: serve looks at
 * start, after changes (an endpoint added through this server is one) and every few seconds
 * (one added through another). The wakes of changes committed while it starts wait for it.
 */
function startDeliveries(
  store: CompleteStore,
  url: string,
  env: Io["env"],
  settings: { allowPrivate: boolean; leaseMs: number; endpointConcurrency: number; pollIntervalMs: number; writeLock: SharedArrayBuffer },
  log: ReturnType<typeof createServerLog>,
): Deliveries {
  const warnDisabled = (webhookId: string, reason: "gone" | "failing") =>
    log.warn(`webhook ${webhookId} disabled: ${reason === "gone" ? "its receiver answered 410 Gone" : "five days of nothing but failed deliveries"}`);
  const besideHandler = (): Deliveries => {
    const transport = createWebhookTransport({ allowPrivate: settings.allowPrivate });
    const dispatcher = createWebhookDispatcher(store, {
      transport,
      leaseMs: settings.leaseMs,
      endpointConcurrency: settings.endpointConcurrency,
      pollIntervalMs: settings.pollIntervalMs,
      onError: (error) => log.warn(`webhook deliveries failed (tried again shortly): ${messageOf(error)}`),
      onAttempt: (report) => report.disabled && warnDisabled(report.webhookId, report.disabled),
    });
    dispatcher.start();
    return { wake: dispatcher.wake, stop: () => dispatcher.stop().then(() => transport.close()) };
  };
  if (isInMemory(url)) return besideHandler();
  let stopping = false;
  const inThread = (): Deliveries => {
    const thread = startWebhookThread({ url, env, ...settings, warn: log.warn, onDisabled: warnDisabled });
    let instead: Deliveries | undefined;
    thread.ready.catch((error: unknown) => {
      if (stopping) return;
      log.warn(`webhook deliveries go out from the request thread: their own thread did not start (${messageOf(error)})`);
      instead = besideHandler();
    });
    return {
      wake: () => (instead ?? thread).wake(),
      async stop() {
        await thread.stop();
        await instead?.stop();
      },
    };
  };
  if (!store.hasEnabledWebhooks) return inThread();

  const hasEnabledWebhooks = store.hasEnabledWebhooks.bind(store);
  let started: Deliveries | undefined;
  let looking: Promise<void> | undefined;
  let lookedAt = 0;
  let lookAgain: ReturnType<typeof setTimeout> | undefined;
  const look = (): Promise<void> =>
    (looking ??= (async () => {
      lookedAt = Date.now();
      try {
        if (!(await hasEnabledWebhooks()) || stopping || started) return;
        log.info("webhook deliveries start: an endpoint is enabled");
        started = inThread();
        clearInterval(poll);
        started.wake();
      } catch (error) {
        log.warn(`looking for webhook endpoints failed (tried again shortly): ${messageOf(error)}`);
      } finally {
        looking = undefined;
      }
    })());
  const poll = setInterval(() => void look(), LOOK_FOR_ENDPOINTS_EVERY_MS);
  poll.unref();
  void look();
  return {
    wake() {
      if (started) return started.wake();
      // Changes come thousands a second: one look per interval, the last change's look deferred to its end.
      if (lookAgain) return;
      const wait = Math.max(0, lookedAt + LOOK_AFTER_CHANGES_EVERY_MS - Date.now());
      lookAgain = setTimeout(() => {
        lookAgain = undefined;
        void look();
      }, wait);
    },
    async stop() {
      stopping = true;
      clearInterval(poll);
      clearTimeout(lookAgain);
      await looking;
      await started?.stop();
    },
  };
}

/** How often serve looks for an enabled endpoint (one added through another server or the CLI) until it finds one. */
const LOOK_FOR_ENDPOINTS_EVERY_MS = 5000;
/** How long after its last look serve looks again after a change. */
const LOOK_AFTER_CHANGES_EVERY_MS = 200;

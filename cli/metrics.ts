/**
 * Prometheus metrics for `formsink serve --metrics`: request latency per route pattern, method
 * and status, store operation timings and a few process gauges, written in the text exposition
 * format (version 0.0.4) by hand: the format is a few lines of text, and a client library would
 * be the server's largest dependency. They are served on a listener of their own (see
 * docs/operations.md), never on the public API's port.
 */
import type { RequestLogEntry } from "../src/options.ts";
import type { SubmissionStore } from "../src/store.ts";
import { BadValue } from "./config.ts";

/** Seconds: from a cached read to a slow commit on a busy disk. */
const BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/** Any other method is counted as "other": clients choose methods, and each would be a new series. */
const KNOWN_METHODS = new Set(["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]);

export const METRICS_PATH = "/metrics";

/** `--metrics` (or FORMSINK_METRICS): `PORT` on 127.0.0.1, or `HOST:PORT`. */
export function metricsAddress(text: string): { hostname: string; port: number } {
  const match = /^(?:(.+):)?(\d{1,5})$/.exec(text);
  const port = Number(match?.[2]);
  if (!match || !(port >= 0 && port <= 65535)) {
    throw new BadValue("must be a port, or host:port, such as 9464 or 0.0.0.0:9464");
  }
  return { hostname: match[1]?.replace(/^\[(.*)\]$/, "$1") ?? "127.0.0.1", port };
}

/** A histogram per label set: cumulative counts are made when scraped, not on every observation. */
class Histogram {
  readonly #series = new Map<string, { labels: string; counts: number[]; sum: number; count: number }>();

  constructor(readonly name: string, readonly help: string) {}

  observe(labels: string, seconds: number): void {
    let series = this.#series.get(labels);
    if (series === undefined) {
      series = { labels, counts: new Array<number>(BUCKETS.length).fill(0), sum: 0, count: 0 };
      this.#series.set(labels, series);
    }
    let bucket = 0;
    while (bucket < BUCKETS.length && seconds > BUCKETS[bucket]!) bucket++;
    if (bucket < BUCKETS.length) series.counts[bucket]!++;
    series.sum += seconds;
    series.count++;
  }

  write(lines: string[]): void {
    lines.push(`# HELP ${this.name} ${this.help}`, `# TYPE ${this.name} histogram`);
    for (const { labels, counts, sum, count } of this.#series.values()) {
      let cumulative = 0;
      BUCKETS.forEach((bound, i) => {
        cumulative += counts[i]!;
        lines.push(`${this.name}_bucket{${labels},le="${bound}"} ${cumulative}`);
      });
      lines.push(`${this.name}_bucket{${labels},le="+Inf"} ${count}`, `${this.name}_sum{${labels}} ${sum}`, `${this.name}_count{${labels}} ${count}`);
    }
  }
}

export interface ServerMetrics {
  /** Counts a request from the handler's log entry. */
  observeRequest(entry: RequestLogEntry): void;
  /** The same store, each operation timed. */
  timeStore(store: SubmissionStore): SubmissionStore;
  /** The exposition text of everything counted so far. */
  scrape(): string;
}

export function createServerMetrics(): ServerMetrics {
  const requests = new Histogram(
    "formsink_http_request_duration_seconds",
    "Time to answer an API request (to the response head for streamed exports), by route pattern, method and status.",
  );
  const storeOperations = new Histogram("formsink_store_operation_duration_seconds", "Time a store operation took, by operation.");
  const storeErrors = new Map<string, number>();
  const requestLabels = new Map<string, string>();

  return {
    observeRequest({ method, route, status, durationMs }) {
      const key = `${method} ${route} ${status}`;
      let labels = requestLabels.get(key);
      if (labels === undefined) {
        const methodLabel = KNOWN_METHODS.has(method) ? method : "other";
        labels = `method="${methodLabel}",route="${escapeLabel(route ?? "unmatched")}",status="${status}"`;
        requestLabels.set(key, labels);
      }
      requests.observe(labels, durationMs / 1000);
    },

    timeStore(store) {
      // The stores `formsink serve` opens are plain objects: their own keys are every operation.
      const timed = { ...store };
      for (const name of Object.keys(store) as (keyof SubmissionStore)[]) {
        const operation = store[name];
        if (typeof operation !== "function" || name === "close") continue;
        const labels = `operation="${escapeLabel(name)}"`;
        (timed as Record<string, unknown>)[name] = async (...args: unknown[]) => {
          const started = performance.now();
          try {
            return await (operation as (...args: unknown[]) => Promise<unknown>).apply(store, args);
          } catch (error) {
            storeErrors.set(name, (storeErrors.get(name) ?? 0) + 1);
            throw error;
          } finally {
            storeOperations.observe(labels, (performance.now() - started) / 1000);
          }
        };
      }
      return timed;
    },

    scrape() {
      const lines: string[] = [];
      requests.write(lines);
      storeOperations.write(lines);
      lines.push(
        "# HELP formsink_store_operation_errors_total Store operations that failed, by operation.",
        "# TYPE formsink_store_operation_errors_total counter",
        ...[...storeErrors].map(([name, count]) => `formsink_store_operation_errors_total{operation="${escapeLabel(name)}"} ${count}`),
      );
      const cpu = process.cpuUsage();
      lines.push(
        "# HELP process_cpu_seconds_total Total user and system CPU time spent in seconds.",
        "# TYPE process_cpu_seconds_total counter",
        `process_cpu_seconds_total ${(cpu.user + cpu.system) / 1e6}`,
        "# HELP process_resident_memory_bytes Resident memory size in bytes.",
        "# TYPE process_resident_memory_bytes gauge",
        `process_resident_memory_bytes ${process.memoryUsage.rss()}`,
        "# HELP process_start_time_seconds Start time of the process since unix epoch in seconds.",
        "# TYPE process_start_time_seconds gauge",
        `process_start_time_seconds ${Math.round(Date.now() / 1000 - process.uptime())}`,
      );
      return `${lines.join("\n")}\n`;
    },
  };
}

/** The exposition format's label value escapes: backslash, double quote, line feed. */
function escapeLabel(value: string): string {
  return value.replace(/[\\"\n]/g, (c) => (c === "\n" ? "\\n" : `\\${c}`));
}

/** The metrics listener's handler: the exposition at `GET /metrics`, nothing else. */
export function metricsHandler(metrics: ServerMetrics): (request: Request) => Promise<Response> {
  return async (request) => {
    if (new URL(request.url).pathname !== METRICS_PATH) return new Response("Not found\n", { status: 404 });
    if (request.method !== "GET" && request.method !== "HEAD") {
      return new Response("Method not allowed\n", { status: 405, headers: { allow: "GET, HEAD" } });
    }
    return new Response(metrics.scrape(), { headers: { "content-type": "text/plain; version=0.0.4; charset=utf-8", "cache-control": "no-store" } });
  };
}

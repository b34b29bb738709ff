/**
 * Webhooks: what subscribed endpoints cost the create path, and how fast the dispatcher
 * delivers. The receiver is a server in a process of its own (HTTP/1.1 read by hand on
 * node:net), answering 204 at once and counting what it got.
 *
 * - Creates over HTTP (autocannon, 10 connections, pinned to core 1) against formsink on a
 *   libSQL file in a process of its own (core 0), its dispatcher running as `formsink serve`
 *   runs it, in a thread of its own, which is pinned to core 1 beside the load and the
 *   receiver: with no endpoint, then with two endpoints subscribed to every event, their
 *   deliveries going out meanwhile. Short rounds alternate, none first and last (none, two,
 *   none, ..., two, none); each round with two is compared with the mean of the rounds without
 *   just before and just after it, seconds apart, so that the machine's drift between rounds
 *   cancels to first order, and the share is the median of those ratios. A round with
 *   endpoints counts only if its deliveries kept pace: what the receiver got during the round
 *   is printed beside twice the creates, and what was still to deliver at its end (the lag).
 * - The dispatcher's `runOnce` in this process (core 0) on a backlog of events, to one endpoint
 *   and to four, on a libSQL file (`--memory`: the memory store).
 *
 *   node --import tsx bench/webhooks.ts [--quick] [--memory] [--profile=<dir>] [--rate=<creates/s>] [--rounds=<n>]
 *
 * `--quick`: shorter rounds, a fifth of the events. `--profile=<dir>`: the server process writes
 * V8 CPU profiles (`--cpu-prof`) there when it stops, one per thread, the dispatcher's included
 * (read them with bench/support/profile-top.ts). `--rate=<creates/s>`: every round sends creates
 * at that rate, not as fast as they are answered, so that rounds compare CPU per create and per
 * delivery at one throughput whatever else runs on the machine (no target is reported then).
 * `--rounds=<n>`: rounds with two endpoints (and n + 1 without); 9 (`--quick`: 5).
 *
 * Before the rounds, one with two endpoints warms the server up (its request path and the
 * dispatcher's thread, idle until then), as fast as answered: not counted, so that each round
 * printed is of warm code, the first one too. It lasts a number of creates, not of seconds: on
 * a busy machine a few seconds were too few creates for V8 to be done compiling.
 */
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createWebhookTransport } from "../adapters/webhook-transport.ts";
import { createApiKey } from "../src/auth/keys.ts";
import type { CompleteStore, WebhookRecord } from "../src/store.ts";
import { createLibsqlStore } from "../src/stores/libsql/index.ts";
import { createMemoryStore } from "../src/stores/memory.ts";
import type { Submission } from "../src/submission.ts";
import { createWebhookDispatcher } from "../src/webhooks/dispatcher.ts";
import { readdirSync, readFileSync } from "node:fs";
import { canPin, cpuSeconds, formatTable, pinSelf, runLoad, startServerProcess, stopServerProcess, threadCpuSeconds } from "./support/load.ts";
import { reportTargets } from "./support/targets.ts";
import { median } from "./support/timing.ts";

const quick = process.argv.includes("--quick");
const memory = process.argv.includes("--memory");
const profileDir = process.argv.find((arg) => arg.startsWith("--profile="))?.slice("--profile=".length);
const SECONDS = quick ? 2 : 4;
const WARM_UP_CREATES = quick ? 6_000 : 20_000;
const rateOption = process.argv.find((arg) => arg.startsWith("--rate="))?.slice("--rate=".length);
const RATE = rateOption === undefined ? undefined : Number(rateOption);
const ROUNDS = Number(process.argv.find((arg) => arg.startsWith("--rounds="))?.slice("--rounds=".length) ?? (quick ? 5 : 9));
const BACKLOG = quick ? 4_000 : 20_000;

/** The core the dispatcher's thread is pinned to: the load generator's and the receiver's. */
const DISPATCHER_CORE = 1;
/** A round with endpoints counts when at most this share of its deliveries was still to go at its end. */
const MOST_LAG = 0.02;

/**
 * The receiver: answers each request 204 at once and counts the POSTs; a GET answers the count.
 * HTTP/1.1 parsed by hand on a node:net server, not node:http, because it shares core 1 with the
 * dispatcher's thread and node:http costs about twice as much CPU per request. It stands for a
 * receiver on another machine: what it costs is not the product's. It reads requests as the
 * transport sends them (a Content-Length body, keep-alive), nothing more.
 */
const RECEIVER = `
let received = 0;
require("node:net").createServer((socket) => {
  let pending = "";
  socket.setNoDelay(true);
  socket.on("error", () => {});
  socket.on("data", (chunk) => {
    pending += chunk.toString("latin1");
    let answers = "";
    for (let end; (end = pending.indexOf("\\r\\n\\r\\n")) >= 0; ) {
      const head = pending.slice(0, end);
      const length = Number(/\\r\\ncontent-length: *(\\d+)/i.exec(head)?.[1] ?? 0);
      if (pending.length < end + 4 + length) break;
      pending = pending.slice(end + 4 + length);
      if (head.startsWith("GET ")) answers += "HTTP/1.1 200 OK\\r\\ncontent-length: " + String(received).length + "\\r\\n\\r\\n" + received;
      else {
        received++;
        answers += "HTTP/1.1 204 No Content\\r\\n\\r\\n";
      }
    }
    if (answers) socket.write(answers);
  });
}).listen(0, "127.0.0.1", function () { console.log(this.address().port); });`;

type Receiver = Awaited<ReturnType<typeof startReceiver>>;

async function startReceiver(): Promise<{ url: string; pid: number; received(): Promise<number>; stop(): void }> {
  const node = [process.execPath, "-e", RECEIVER];
  const [command, ...args] = canPin() ? ["taskset", "-c", "1", ...node] : node;
  const child = spawn(command!, args, { stdio: ["ignore", "pipe", "inherit"] });
  const port = await new Promise<string>((resolve) => child.stdout.once("data", (chunk: Buffer) => resolve(chunk.toString().trim())));
  const received = async () => Number(await (await fetch(`http://127.0.0.1:${port}/`)).text());
  return { url: `http://127.0.0.1:${port}/hooks`, pid: child.pid!, received, stop: () => child.kill() };
}

const dir = mkdtempSync(join(tmpdir(), "formsink-bench-webhooks-"));
let files = 0;
async function openStore(): Promise<CompleteStore> {
  return memory ? createMemoryStore() : await createLibsqlStore({ url: `file:${join(dir, `webhooks-${++files}.db`)}` });
}

function endpoint(url: string, n: number): WebhookRecord {
  return {
    webhookId: `wh_bench_${n}`, url, types: null, popupId: null, description: null, createdAt: new Date().toISOString(), disabledAt: null,
    secrets: [`whsec_${btoa(String.fromCharCode(...crypto.getRandomValues(new Uint8Array(32))))}`], previousSecretExpiresAt: null, failingSince: null,
  };
}

const CREATE_BODY = JSON.stringify({ popupId: "popup_1", data: { email: "visitor@example.com", name: "Visitor", consent: true } });

interface CreateRound {
  createsPerSecond: number;
  creates: number;
  /** Deliveries the receiver got during the round. */
  delivered: number;
  /** Deliveries still to go at the round's end, and how long they then took. */
  lag: number;
  drainMs: number;
  /** CPU per create of the server's request thread, and per delivery of its dispatcher thread (us). */
  requestThreadUs: number;
  dispatcherThreadUs: number;
  /** CPU per create of the server's other threads: the binding's (where commits and checkpoints run), and V8's and Node's (compilers, GC). */
  bindingThreadsUs: number;
  v8ThreadsUs: number;
  /** Share of core 0 that the server's threads but the dispatcher's used, and of core 1 the load generator, the receiver and the dispatcher's thread. */
  core0Ours: number;
  core1Ours: number;
  /** Share of each core busy with anything, other processes on the machine included. */
  core0Busy: number;
  core1Busy: number;
  /**
   * Per create, how long the request thread and the load generator waited ready to run while
   * their core ran something else (us): what sharing a core cost them in time rather than CPU.
   */
  requestWaitUs: number;
  loadWaitUs: number;
  /** CPU of the load generator (this process) per create, and of the receiver per delivery it got (us): core 1's other two shares. */
  loadUs: number;
  receiverUs: number;
}

/** CPU seconds of each thread of a process, by thread id, and the cores each may run on. */
function threads(pid: number): Map<string, { cpu: number; cores: string }> {
  const found = new Map<string, { cpu: number; cores: string }>();
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      const fields = readFileSync(`/proc/${pid}/task/${tid}/stat`, "utf8").split(") ")[1]!.split(" ");
      const cores = /^Cpus_allowed_list:\s*(\S+)/m.exec(readFileSync(`/proc/${pid}/task/${tid}/status`, "utf8"))?.[1] ?? "";
      found.set(tid, { cpu: (Number(fields[11]) + Number(fields[12])) / 100, cores });
    } catch {
      // The thread ended meanwhile.
    }
  }
  return found;
}

/**
 * Seconds the thread whose schedstat file is `path` has waited so far to run while ready
 * (Linux's run-queue wait: its core ran another thread); NaN where the kernel does not count it.
 */
function runQueueWait(path: string): number {
  try {
    return Number(readFileSync(path, "utf8").split(" ")[1]) / 1e9;
  } catch {
    return NaN;
  }
}

/** Idle and total time of each core so far, from /proc/stat (clock ticks). */
function coreTimes(): { idle: number; total: number }[] {
  return readFileSync("/proc/stat", "utf8").split("\n").filter((line) => /^cpu\d+ /.test(line)).map((line) => {
    const ticks = line.trim().split(/\s+/).slice(1, 9).map(Number);
    return { idle: ticks[3]! + ticks[4]!, total: ticks.reduce((sum, tick) => sum + tick, 0) };
  });
}

/** The dispatcher's thread: the one thread of the server pinned to DISPATCHER_CORE. */
function dispatcherThread(pid: number): string | undefined {
  return [...threads(pid)].find(([, thread]) => thread.cores === String(DISPATCHER_CORE))?.[0];
}

/** Creates over HTTP with `endpoints` endpoints subscribed, their deliveries going out meanwhile; waits for them after. */
async function createRound(server: { url: string; pid: number }, key: string, receiver: Receiver, endpoints: number, load: { rate?: number; amount?: number } = { rate: RATE }): Promise<CreateRound> {
  const headers = { "x-api-key": key, "content-type": "application/json" };
  const added: string[] = [];
  for (let n = 0; n < endpoints; n++) {
    const answer = await fetch(`${server.url}/api/webhooks`, { method: "POST", headers, body: JSON.stringify({ url: receiver.url }) });
    added.push(((await answer.json()) as { webhookId: string }).webhookId);
  }
  const dispatcher = dispatcherThread(server.pid);
  const cpu = () => {
    const now = threads(server.pid);
    const own = process.cpuUsage();
    return {
      request: now.get(String(server.pid))!.cpu, dispatcher: dispatcher === undefined ? NaN : now.get(dispatcher)!.cpu,
      server: [...now.values()].reduce((sum, thread) => sum + thread.cpu, 0), binding: threadCpuSeconds(server.pid).libSQL!,
      load: (own.user + own.system) / 1e6, receiver: cpuSeconds(receiver.pid),
      // The load generator (autocannon) runs in this thread.
      requestWait: runQueueWait(`/proc/${server.pid}/task/${server.pid}/schedstat`), loadWait: runQueueWait("/proc/thread-self/schedstat"),
      cores: coreTimes(), at: performance.now(),
    };
  };
  const receivedBefore = await receiver.received();
  const cpuBefore = cpu();
  const sent = await runLoad({ url: `${server.url}/api/submission`, method: "POST", headers, body: CREATE_BODY, durationSeconds: SECONDS, ...load });
  const cpuAfter = cpu();
  const delivered = (await receiver.received()) - receivedBefore;
  if (sent.non2xx > 0 || sent.errors > 0) throw new Error(`creates failed: ${sent.non2xx} not 2xx, ${sent.errors} errors`);
  const drainStarted = performance.now();
  for (const webhookId of added) {
    for (;;) {
      const answer = await fetch(`${server.url}/api/webhooks/${webhookId}/deliveries?status=pending&limit=1`, { headers });
      if (((await answer.json()) as { items: unknown[] }).items.length === 0) break;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }
  const drainMs = added.length === 0 ? 0 : performance.now() - drainStarted;
  const lag = (await receiver.received()) - receivedBefore - delivered;
  for (const webhookId of added) await fetch(`${server.url}/api/webhooks/${webhookId}`, { method: "DELETE", headers });
  const spent = (of: "request" | "dispatcher" | "server" | "binding" | "load" | "receiver" | "requestWait" | "loadWait") => cpuAfter[of] - cpuBefore[of];
  const dispatcherSpent = Number.isNaN(spent("dispatcher")) ? 0 : spent("dispatcher");
  const busy = (core: number) => {
    const after = cpuAfter.cores[core], before = cpuBefore.cores[core];
    return after === undefined || before === undefined ? NaN : 1 - (after.idle - before.idle) / (after.total - before.total);
  };
  return {
    createsPerSecond: sent.requestsPerSecond, creates: sent.succeeded, delivered, lag, drainMs,
    requestThreadUs: (spent("request") / sent.succeeded) * 1e6,
    dispatcherThreadUs: delivered === 0 ? NaN : (spent("dispatcher") / delivered) * 1e6,
    bindingThreadsUs: (spent("binding") / sent.succeeded) * 1e6,
    v8ThreadsUs: ((spent("server") - spent("request") - dispatcherSpent - spent("binding")) / sent.succeeded) * 1e6,
    core0Ours: (spent("server") - dispatcherSpent) / ((cpuAfter.at - cpuBefore.at) / 1000),
    core1Ours: (spent("load") + spent("receiver") + dispatcherSpent) / ((cpuAfter.at - cpuBefore.at) / 1000),
    core0Busy: busy(0), core1Busy: busy(DISPATCHER_CORE),
    requestWaitUs: (spent("requestWait") / sent.succeeded) * 1e6,
    loadWaitUs: (spent("loadWait") / sent.succeeded) * 1e6,
    loadUs: (spent("load") / sent.succeeded) * 1e6,
    receiverUs: delivered === 0 ? NaN : (spent("receiver") / delivered) * 1e6,
  };
}

/** Deliveries per second of one `runOnce` through a backlog of BACKLOG events to `endpoints` endpoints. */
async function deliveryRate(receiverUrl: string, endpoints: number): Promise<number> {
  const store = await openStore();
  const accountId = "bench";
  for (let n = 0; n < endpoints; n++) await store.insertWebhook(accountId, endpoint(receiverUrl, n));
  const perEndpoint = Math.round(BACKLOG / endpoints);
  for (let from = 0; from < perEndpoint; from += 5000) {
    await store.importSubmissions(accountId, Array.from({ length: Math.min(5000, perEndpoint - from) }, (_, i) => submission(from + i)));
  }
  const transport = createWebhookTransport({ allowPrivate: true });
  const started = performance.now();
  const made = await createWebhookDispatcher(store, { transport }).runOnce();
  const rate = made / ((performance.now() - started) / 1000);
  if (made !== perEndpoint * endpoints) throw new Error(`made ${made} attempts, expected ${perEndpoint * endpoints}`);
  transport.close();
  await store.close();
  return rate;
}

function submission(i: number): Submission {
  return {
    submissionId: crypto.randomUUID(), popupId: `popup_${i % 5}`, data: { email: `visitor${i}@example.com`, name: `Visitor ${i}` }, domain: "example.com",
    userAgent: "Mozilla/5.0", device: "desktop", status: "pending", createdAt: new Date(Date.UTC(2025, 0, 1) + i).toISOString(),
  };
}

pinSelf(1);
const receiver = await startReceiver();
try {
  const file = join(dir, "creates.db");
  const setup = await createLibsqlStore({ url: `file:${file}` });
  const { key } = await createApiKey(setup, { account: "bench", kind: "secret" });
  await setup.close();
  const pin = canPin() ? [`--pin-dispatcher=${DISPATCHER_CORE}`] : [];
  const server = await startServerProcess(new URL("./support/webhook-server.ts", import.meta.url), [file, ...pin], 0, profileDir ? ["--cpu-prof", `--cpu-prof-dir=${profileDir}`] : []);
  /** The rounds in the order they ran: none, two, none, ..., two, none. */
  const rounds: { endpoints: 0 | 2; round: CreateRound }[] = [];
  try {
    const target = { url: server.url, pid: server.child.pid! };
    await createRound(target, key, receiver, 2, { amount: WARM_UP_CREATES });
    rounds.push({ endpoints: 0, round: await createRound(target, key, receiver, 0) });
    for (let round = 0; round < ROUNDS; round++) {
      rounds.push({ endpoints: 2, round: await createRound(target, key, receiver, 2) });
      rounds.push({ endpoints: 0, round: await createRound(target, key, receiver, 0) });
    }
  } finally {
    await stopServerProcess(server.child);
  }
  const keptPace = (round: CreateRound) => round.lag <= MOST_LAG * 2 * round.creates;
  /**
   * Each round with two endpoints against the mean of the rounds without just before and just
   * after it: a drift of the machine's speed that is steady over those three rounds cancels.
   */
  const pairs = rounds.flatMap(({ endpoints, round }, i) => {
    if (endpoints === 0) return [];
    const around = (rounds[i - 1]!.round.createsPerSecond + rounds[i + 1]!.round.createsPerSecond) / 2;
    return [{ round, share: round.createsPerSecond / around, counted: keptPace(round) }];
  });
  const counted = pairs.filter((pair) => pair.counted);
  const share = median(counted.map((pair) => pair.share));
  // A round that fell behind does not count; so that leaving rounds out cannot carry the
  // target, most rounds with endpoints must have kept pace, and the median of all of them is
  // printed beside when some did not.
  const kept = counted.length * 2 > pairs.length;
  // Printed beside, on the same rounds: the fastest round with two that kept pace against the
  // fastest without, whichever rounds those were (what a best of each kind judges).
  const fastest = (of: CreateRound[]) => of.reduce((best, round) => (round.createsPerSecond > best.createsPerSecond ? round : best));
  const without = rounds.filter((entry) => entry.endpoints === 0).map((entry) => entry.round);
  const bestOfEach = fastest(counted.length > 0 ? counted.map((pair) => pair.round) : pairs.map((pair) => pair.round)).createsPerSecond / fastest(without).createsPerSecond;
  const rate = (perSecond: number) => Math.round(perSecond).toLocaleString("en-US");
  const us = (value: number) => (Number.isNaN(value) ? "-" : `${Math.round(value)} us`);
  const percent = (value: number) => (Number.isNaN(value) ? "-" : `${Math.round(value * 100)}%`);
  console.log(
    `Node ${process.version}; ${canPin() ? `server on core 0, its webhook dispatcher's thread, the load and the receiver on core ${DISPATCHER_CORE}` : "taskset unavailable: not pinned"}; ${SECONDS} s per round${RATE === undefined ? "" : `, creates sent at ${rate(RATE)}/s`}, after ${WARM_UP_CREATES.toLocaleString("en-US")} creates to warm up`,
  );
  let pair = 0;
  console.log(
    formatTable(
      ["round", "endpoints", "creates/s", "of the two around", "delivered", "2x creates", "lag at end", "drained in", "request thread/create", "dispatcher/delivery", "binding/create", "V8 and Node/create", "core 0: ours", "all", "core 1: ours", "all", "request thread waited/create", "load waited/create", "load/create", "receiver/delivery"],
      rounds.map(({ endpoints, round }, i) => {
        const two = endpoints === 2;
        const paired = two ? pairs[pair++]! : undefined;
        return [
          String(i + 1), two ? "two" : "none", rate(round.createsPerSecond), paired ? `${sharePercent(paired.share)}${paired.counted ? "" : " (fell behind)"}` : "-",
          rate(round.delivered), two ? rate(2 * round.creates) : "-", two ? rate(round.lag) : "-", two ? `${Math.round(round.drainMs)} ms` : "-",
          us(round.requestThreadUs), us(round.dispatcherThreadUs), us(round.bindingThreadsUs), us(round.v8ThreadsUs),
          percent(round.core0Ours), percent(round.core0Busy), percent(round.core1Ours), percent(round.core1Busy), us(round.requestWaitUs), us(round.loadWaitUs),
          us(round.loadUs), us(round.receiverUs),
        ];
      }),
    ),
  );
  const requestNone = median(without.map((round) => round.requestThreadUs));
  const requestTwo = median(pairs.map((pair) => pair.round.requestThreadUs));
  console.log(
    `Medians: request thread ${us(requestNone)} per create without endpoints, ${us(requestTwo)} with two (${requestTwo >= requestNone ? "+" : ""}${us(requestTwo - requestNone)}); ` +
      `dispatcher's thread ${us(median(pairs.map((pair) => pair.round.dispatcherThreadUs)))} per delivery`,
  );
  // Core 1's CPU per create with two endpoints, by whom: where a cut there pays.
  const core1 = {
    load: median(pairs.map((pair) => pair.round.loadUs)), receiver: median(pairs.map((pair) => pair.round.receiverUs * pair.round.delivered / pair.round.creates)),
    dispatcher: median(pairs.map((pair) => pair.round.dispatcherThreadUs * pair.round.delivered / pair.round.creates)),
  };
  console.log(
    `Core 1 per create with two endpoints (medians): load generator ${us(core1.load)} (${us(median(without.map((round) => round.loadUs)))} without), ` +
      `receiver ${us(core1.receiver)}, dispatcher's thread ${us(core1.dispatcher)}; ` +
      `receiver ${us(median(pairs.map((pair) => pair.round.receiverUs)))} per delivery`,
  );
  const shares = counted.map((pair) => pair.share).sort((x, y) => x - y);
  const summary = `${sharePercent(share)}, the median of ${counted.length} of ${pairs.length} rounds' shares of the two around them` +
    (counted.length > 0 ? ` (${sharePercent(shares[0]!)} to ${sharePercent(shares.at(-1)!)})` : "") +
    (counted.length < pairs.length ? `, of all ${pairs.length}: ${sharePercent(median(pairs.map((pair) => pair.share)))}` : "") + `; best of each: ${sharePercent(bestOfEach)}`;
  if (RATE !== undefined) {
    console.log(`Creates sent at a set rate: their share (${summary}) is not the target's figure, and the dispatcher alone is not run.`);
  } else {
    console.log(`HTTP creates (libSQL file) with two endpoints subscribed: ${summary}${kept ? "" : `; deliveries fell behind in ${pairs.length - counted.length} of ${pairs.length} rounds`}`);
    await dispatcherAlone(share, `${sharePercent(share)} (median of ${counted.length} of ${pairs.length} rounds; best of each ${sharePercent(bestOfEach)})`, kept);
  }
} finally {
  receiver.stop();
  rmSync(dir, { recursive: true, force: true });
}

/** The share as judged against its target: to a tenth, so that one just under 90% does not print as 90%. */
function sharePercent(share: number): string {
  return Number.isNaN(share) ? "-" : `${(Math.floor(share * 1000) / 10).toFixed(1)}%`;
}

/** The dispatcher's `runOnce` alone, then the targets. */
async function dispatcherAlone(share: number, measured: string, kept: boolean): Promise<void> {
  // The dispatcher alone now, on the core the server had.
  pinSelf(0);
  const one = await deliveryRate(receiver.url, 1);
  const four = await deliveryRate(receiver.url, 4);
  console.log(`dispatcher, ${BACKLOG.toLocaleString("en-US")} deliveries: ${Math.round(one).toLocaleString("en-US")}/s to one endpoint, ${Math.round(four).toLocaleString("en-US")}/s to four`);
  reportTargets([
    {
      target: "webhooks-create", what: "libsql: HTTP creates with two endpoints subscribed, share of none around",
      measured: `${measured}${kept ? "" : ", deliveries fell behind"}`,
      goal: ">= 90%, deliveries keeping pace", met: share >= 0.9 && kept,
    },
    {
      target: "webhooks-deliver", what: `${memory ? "memory" : "libsql"}: dispatcher deliveries to one local endpoint`,
      measured: `${Math.round(one).toLocaleString("en-US")}/s (four endpoints: ${Math.round(four).toLocaleString("en-US")}/s)`, goal: ">= 1,000/s", met: one >= 1000,
    },
  ]);
}

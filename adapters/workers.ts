/**
 * Cloudflare Workers adapter: a module worker whose store comes from its environment.
 *
 *   export { default } from "formsink/workers";        // D1 binding `DB`, or FORMSINK_DB (+ token)
 *
 * The handler is built on the first request and kept for the isolate's life; a failed start
 * (say, a migration error) is retried on the next request instead of being cached.
 *
 * Its `scheduled` handler (give the worker a Cron Trigger, such as every minute) sends the
 * webhook deliveries that are due, enforces retention rules and prunes the change log. A
 * change's first deliveries go out right after its answer, within the request's `waitUntil`.
 */
import { createEventPruner } from "../src/event-pruning.ts";
import { createSubmissionsHandler, type SubmissionsHandler } from "../src/handler.ts";
import { mayHaveChanged, type SubmissionsHandlerOptions } from "../src/options.ts";
import { createRetentionJob } from "../src/privacy/retention.ts";
import { isEventLog, isPrivacyStore, isWebhookStore, type SubmissionStore } from "../src/store.ts";
import { createD1Store, type D1Database } from "../src/stores/d1/index.ts";
import { createLibsqlClientStore } from "../src/stores/libsql/client.ts";
import { createWebhookDispatcher, type WebhookDispatcher } from "../src/webhooks/dispatcher.ts";
import { createFetchWebhookTransport } from "../src/webhooks/transport.ts";
import { internalError, reportError } from "./server.ts";

export interface WorkerEnv {
  /** A D1 binding: used when present. */
  DB?: D1Database;
  /** Otherwise a remote libSQL database over HTTP, e.g. `libsql://<name>.turso.io` (a secret). */
  FORMSINK_DB?: string;
  FORMSINK_DB_AUTH_TOKEN?: string;
  /** "1": webhooks may go to `http` URLs and private addresses (local work with `wrangler dev`). */
  FORMSINK_ALLOW_PRIVATE_WEBHOOKS?: string;
}

/** What the runtime passes beside a request or a Cron Trigger's event: work may go on after the answer. */
export interface WorkerContext {
  waitUntil(promise: Promise<unknown>): void;
}

export interface WorkerOptions<Env> extends SubmissionsHandlerOptions {
  /** Where the store comes from; default: `env.DB` (D1), else `env.FORMSINK_DB` (libSQL). */
  store?: (env: Env) => Promise<SubmissionStore>;
  /** Days the change log keeps events; the scheduled handler prunes older ones. Default 30. */
  eventRetentionDays?: number;
}

export interface Worker<Env> {
  fetch(request: Request, env: Env, context?: WorkerContext): Promise<Response>;
  /**
   * Run by a Cron Trigger: sends the webhook deliveries that are due (docs/webhooks.md), enforces
   * the retention rules (docs/privacy.md) and prunes the change log (docs/events.md).
   */
  scheduled(controller: unknown, env: Env): Promise<void>;
}

interface Opened {
  store: SubmissionStore;
  handler: SubmissionsHandler;
  dispatcher: WebhookDispatcher | undefined;
}

export function createWorker<Env extends object = WorkerEnv>(options: WorkerOptions<Env> = {}): Worker<Env> {
  const { store = (env: Env) => storeFromEnv(env), eventRetentionDays, ...handlerOptions } = options;
  let opened: Promise<Opened> | undefined;
  const start = async (env: Env): Promise<Opened> => {
    const s = await store(env);
    const handler = createSubmissionsHandler(s, { allowPrivateWebhooks: allowsPrivateWebhooks(env), ...handlerOptions });
    return { store: s, handler, dispatcher: dispatcherFor(s, env) };
  };
  const open = (env: Env) =>
    (opened ??= start(env)).catch((error: unknown) => {
      opened = undefined;
      throw error;
    });
  // Said once per isolate: every request of a Worker deployed without its database fails alike.
  let reportedNotConfigured = false;
  return {
    async fetch(request, env, context) {
      try {
        const { handler, dispatcher } = await open(env);
        // Cloudflare's edge sets CF-Connecting-IP to the visitor's address, replacing any sent.
        const response = await handler(request, { clientAddress: request.headers.get("cf-connecting-ip") ?? undefined });
        if (dispatcher && context && mayHaveChanged(request.method, response.status)) context.waitUntil(dispatcher.runOnce().catch(reportError));
        return response;
      } catch (error) {
        if (error instanceof WorkerNotConfigured) {
          if (!reportedNotConfigured) console.error(`formsink: ${error.message}`);
          reportedNotConfigured = true;
          return Response.json({ message: error.message }, { status: 500 });
        }
        reportError(error);
        return internalError();
      }
    },
    async scheduled(_controller, env) {
      const { store: s, dispatcher } = await open(env);
      if (isPrivacyStore(s)) await createRetentionJob(s).runOnce();
      if (isEventLog(s)) await createEventPruner(s, { retentionDays: eventRetentionDays }).runOnce();
      await dispatcher?.runOnce();
    },
  };
}

/** The isolate's webhook dispatcher, over `fetch` (Cloudflare's network refuses what the URL check cannot see: docs/webhooks.md). */
function dispatcherFor(store: SubmissionStore, env: object): WebhookDispatcher | undefined {
  if (!isWebhookStore(store)) return undefined;
  return createWebhookDispatcher(store, { transport: createFetchWebhookTransport({ allowPrivate: allowsPrivateWebhooks(env) }), onError: reportError });
}

function allowsPrivateWebhooks(env: object): boolean {
  return (env as WorkerEnv).FORMSINK_ALLOW_PRIVATE_WEBHOOKS === "1";
}

/**
 * The Worker was deployed without a database: no D1 binding named `DB` and no `FORMSINK_DB`.
 * Every request is answered 500 with this message, which names what is missing and how to add
 * it (the deployment's own mistake, which its operator reads first in a client's answer).
 */
export class WorkerNotConfigured extends Error {
  override name = "WorkerNotConfigured";
}

export async function storeFromEnv(env: WorkerEnv): Promise<SubmissionStore> {
  if (env.DB) return createD1Store(env.DB);
  if (env.FORMSINK_DB) {
    // Loaded only for a worker that uses it, not on every D1 worker's start.
    const { createClient } = await import("@libsql/client/web");
    return createLibsqlClientStore(createClient({ url: env.FORMSINK_DB, authToken: env.FORMSINK_DB_AUTH_TOKEN }), true);
  }
  throw new WorkerNotConfigured(notConfiguredMessage(env));
}

function notConfiguredMessage(env: object): string {
  const otherD1 = Object.keys(env).filter((name) => isD1Binding((env as Record<string, unknown>)[name]));
  const found = otherD1.length > 0
    ? ` It has a D1 binding named ${otherD1.join(", ")}: name it DB, or pass createWorker({ store: (env) => createD1Store(env.${otherD1[0]}) }).`
    : "";
  return "formsink is not configured: this Worker has no D1 binding named DB and no FORMSINK_DB (a libSQL URL) in its environment." + found +
    ' Bind a D1 database as DB in wrangler.toml ([[d1_databases]] binding = "DB", database_name = "formsink", database_id from `wrangler d1 create formsink`)' +
    ' or wrangler.jsonc ("d1_databases": [{ "binding": "DB", ... }]), or set FORMSINK_DB and FORMSINK_DB_AUTH_TOKEN as secrets, then deploy again.';
}

/** A value that looks like a D1 binding (workerd's D1Database has no class of its own to test). */
function isD1Binding(value: unknown): boolean {
  const binding = value as Partial<D1Database> | null;
  return typeof binding === "object" && binding !== null && typeof binding.prepare === "function" && typeof binding.batch === "function";
}

const worker: Worker<WorkerEnv> = createWorker();
export default worker;

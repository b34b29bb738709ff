/**
 * The fixture of the HTTP suites: a handler mounted on a target (called in-process, or over a
 * socket), requests for http://formsink.test, and assertions on answers. Runtime-agnostic: no
 * `node:*`, so the suites run under Node, Bun, Deno and workerd.
 */
import * as assert from "uvu/assert";
import { createApiKey } from "../../src/auth/keys.ts";
import { createSubmissionsHandler } from "../../src/handler.ts";
import type { LogEntry, SubmissionsHandlerOptions } from "../../src/options.ts";
import type { CompleteStore, SubmissionStore } from "../../src/store.ts";
import type { Submission } from "../../src/submission.ts";

export type FetchHandler = (request: Request) => Promise<Response>;

/** A running handler: `send` takes a request for http://formsink.test and answers it. */
export interface HttpTarget {
  send(request: Request): Promise<Response>;
  stop(): Promise<void>;
}

export type StartHttpTarget = (handler: FetchHandler) => Promise<HttpTarget>;

export interface HttpSuiteOptions {
  /** A fresh, empty store for each handler the suite mounts. Default: the memory store. */
  createStore?: () => Promise<CompleteStore>;
}

export const ORIGIN = "http://formsink.test";
export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
export const ISO_UTC_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
export const SUBMISSION_FIELDS = ["createdAt", "data", "device", "domain", "popupId", "status", "submissionId", "userAgent"];
export const IPHONE_UA =
  "Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1";
export const GOOGLEBOT_UA = "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)";
export const MISSING_ID = "0193f5c2-7b8e-7cc1-9a1e-4f1f9d6f0c11";

export interface Reply {
  status: number;
  headers: Headers;
  text: string;
  json: unknown;
}

export interface CallOptions {
  key?: string;
  /** Sent as JSON with `content-type: application/json`. */
  json?: unknown;
  /** Sent as is with `content-type: application/json` unless `headers` says otherwise. */
  rawJson?: string;
  body?: RequestInit["body"];
  headers?: Record<string, string>;
  /** Send to `path` as is, not under the fixture's base path. */
  outsideBasePath?: boolean;
}

export interface Account {
  key: string;
  accountId: string;
}

export interface ListPage {
  items: Submission[];
  limit: number;
  offset: number;
  total: number;
  nextCursor: string | null;
}

export interface Fixture {
  store: CompleteStore;
  log: LogEntry[];
  /** Every key minted for this fixture, whatever became of it. */
  keys: string[];
  call(method: string, path: string, options?: CallOptions): Promise<Reply>;
  /** The response as it comes, its body unread. */
  send(method: string, path: string, options?: CallOptions): Promise<Response>;
  /** A fresh account with a secret key. */
  account(): Promise<Account>;
  /** A fresh account with a secret key and a publishable key for `domains`. */
  site(domains: string[]): Promise<Site>;
  stop(): Promise<void>;
}

export interface Site extends Account {
  publishableKey: string;
}

export async function mount(
  start: StartHttpTarget,
  createStore: () => Promise<CompleteStore>,
  settings: {
    basePath?: string;
    /** The store the handler gets, made from the fixture's (to break it, or to watch it). */
    /** The store the handler gets, made from the fixture's (a store without keys is fine: the fixture's keys stay in it). */
    wrapStore?: (store: CompleteStore) => SubmissionStore;
    /** More handler options (rate limits, client address source). */
    options?: SubmissionsHandlerOptions;
  } = {},
): Promise<Fixture> {
  const store = await createStore();
  const log: LogEntry[] = [];
  const keys: string[] = [];
  const basePath = settings.basePath ?? "";
  const handler = createSubmissionsHandler(settings.wrapStore ? settings.wrapStore(store) : store, {
    ...settings.options,
    basePath: settings.basePath,
    log: (entry) => log.push(entry),
  });
  const target = await start(handler);
  let accounts = 0;
  const fixture: Fixture = {
    store,
    log,
    keys,
    async call(method, path, options = {}) {
      const response = await fixture.send(method, path, options);
      const text = await response.text();
      let json: unknown;
      try {
        json = JSON.parse(text);
      } catch {
        json = undefined;
      }
      return { status: response.status, headers: response.headers, text, json };
    },
    send(method, path, options = {}) {
      const headers = new Headers(options.headers);
      if (options.key !== undefined) headers.set("x-api-key", options.key);
      let body = options.body;
      const jsonText = options.json !== undefined ? JSON.stringify(options.json) : options.rawJson;
      if (jsonText !== undefined) {
        body = jsonText;
        if (!headers.has("content-type")) headers.set("content-type", "application/json");
      }
      return target.send(new Request(`${ORIGIN}${options.outsideBasePath ? "" : basePath}${path}`, { method, headers, body }));
    },
    async account() {
      const created = await createApiKey(store, { account: `account-${++accounts}` });
      keys.push(created.key);
      return { key: created.key, accountId: created.record.accountId };
    },
    async site(domains) {
      const { key, accountId } = await fixture.account();
      const publishable = await createApiKey(store, { account: `account-${accounts}`, kind: "publishable", domains });
      keys.push(publishable.key);
      return { key, accountId, publishableKey: publishable.key };
    },
    async stop() {
      await target.stop();
      await store.close();
    },
  };
  return fixture;
}

/** Asserts an error answer: status, JSON content type, a body of `message` only, no stack trace. */
export function expectError(reply: Reply, status: number, message?: string | RegExp): string {
  assert.is(reply.status, status, `expected ${status}, got ${reply.status}: ${reply.text}`);
  assert.match(reply.headers.get("content-type") ?? "", /^application\/json\b/);
  assert.type(reply.json, "object", `error body is not JSON: ${reply.text}`);
  assert.equal(Object.keys(reply.json as object), ["message"], `error body has more than message: ${reply.text}`);
  const text = (reply.json as { message: unknown }).message;
  assert.type(text, "string");
  const errorMessage = text as string;
  assert.not.match(errorMessage, /\n\s+at\s|\(\/|file:\/\/|\.ts:\d+/, `error message looks like a stack trace: ${errorMessage}`);
  if (typeof message === "string") assert.is(errorMessage, message);
  else if (message) assert.match(errorMessage, message);
  return errorMessage;
}

export function expectJson(reply: Reply, status: number): unknown {
  assert.is(reply.status, status, `expected ${status}, got ${reply.status}: ${reply.text}`);
  assert.match(reply.headers.get("content-type") ?? "", /^application\/json\b/);
  assert.ok(reply.json !== undefined, `body is not JSON: ${reply.text}`);
  return reply.json;
}

export function expectSubmission(value: unknown): Submission {
  assert.type(value, "object");
  assert.equal(Object.keys(value as object).sort(), SUBMISSION_FIELDS);
  const submission = value as Submission;
  assert.match(submission.submissionId, UUID);
  assert.match(submission.createdAt, ISO_UTC_MS);
  assert.ok(["pending", "completed"].includes(submission.status));
  return submission;
}

export async function listPage(f: Fixture, key: string, query = ""): Promise<ListPage> {
  const body = expectJson(await f.call("GET", `/api/submission${query === "" ? "" : `?${query}`}`, { key }), 200);
  assert.equal(Object.keys(body as object).sort(), ["items", "limit", "nextCursor", "offset", "total"]);
  const page = body as ListPage;
  assert.ok(Array.isArray(page.items));
  assert.ok(page.nextCursor === null || (typeof page.nextCursor === "string" && page.nextCursor !== ""), "nextCursor is a cursor or null");
  page.items.forEach(expectSubmission);
  return page;
}

export async function totalOf(f: Fixture, key: string): Promise<number> {
  return (await listPage(f, key)).total;
}

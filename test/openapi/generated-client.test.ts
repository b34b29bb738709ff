/**
 * A client generated from the served document as docs/openapi.md says: types from
 * openapi-typescript, calls through openapi-fetch, compiled by strict TypeScript without a cast,
 * then run against a real server for list, get, create, patch and delete, and webhooks.
 */
import { execFile, execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { promisify } from "node:util";
import openapiTS, { type OpenAPI3 } from "openapi-typescript";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { type NodeServer, serve } from "../../adapters/node.ts";
import { createApiKey } from "../../src/auth/keys.ts";
import { createSubmissionsHandler } from "../../src/handler.ts";
import { createMemoryStore } from "../../src/stores/memory.ts";

const ROOT = resolve(import.meta.dirname, "../..");

// Only JSON routes, and no `as`: a generated type that needs narrowing fails to compile here.
const USE = `import createClient from "openapi-fetch";
import type { paths } from "./formsink-api.ts";

const client = createClient<paths, "application/json">({ baseUrl: process.env.FORMSINK_URL!, headers: { "x-api-key": process.env.FORMSINK_KEY! } });

const created = await client.POST("/api/submission", {
  body: { popupId: "newsletter", data: { email: "a@example.com" } },
  params: { header: { "Idempotency-Key": "signup-1" } },
});
if (created.error) throw new Error(created.error.message);
const id: string = created.data.submissionId;
const pending: "pending" | "completed" = created.data.status;

const page = await client.GET("/api/submission", { params: { query: { limit: "5", popupId: "newsletter", orderBy: "created_at" } } });
if (page.error) throw new Error(page.error.message);
const listed: string[] = page.data.items.map((item) => item.submissionId);

const patched = await client.PATCH("/api/submission/{submissionId}", { params: { path: { submissionId: id } }, body: { status: "completed" } });
if (patched.error) throw new Error(patched.error.message);
const message: "Submission status updated" = patched.data.message;

const one = await client.GET("/api/submission/{submissionId}", { params: { path: { submissionId: id } } });
if (one.error) throw new Error(one.error.message);
const email: unknown = one.data.data.email;

const deleted = await client.DELETE("/api/submission/{submissionId}", { params: { path: { submissionId: id } } });
if (deleted.error) throw new Error(deleted.error.message);
const gone = await client.GET("/api/submission/{submissionId}", { params: { path: { submissionId: id } } });
const goneMessage: string | undefined = gone.error?.message;

const hook = await client.POST("/api/webhooks", { body: { url: "https://crm.example.com/hooks", types: ["submission.created"] } });
if (hook.error) throw new Error(hook.error.message);
const secret: string = hook.data.secret;
const webhookId: string = hook.data.webhookId;
const hooks = await client.GET("/api/webhooks");
if (hooks.error) throw new Error(hooks.error.message);
const disabled = await client.PATCH("/api/webhooks/{webhookId}", { params: { path: { webhookId } }, body: { enabled: false, popupId: null } });
if (disabled.error) throw new Error(disabled.error.message);
const disabledAt: string | null = disabled.data.disabledAt;
const log = await client.GET("/api/webhooks/{webhookId}/deliveries", { params: { path: { webhookId }, query: { status: "failed", limit: "10" } } });
if (log.error) throw new Error(log.error.message);
const nextCursor: string | null = log.data.nextCursor;
const removed = await client.DELETE("/api/webhooks/{webhookId}", { params: { path: { webhookId } } });
if (removed.error) throw new Error(removed.error.message);
const webhooks = { secret: secret.startsWith("whsec_"), listed: hooks.data.items.length, disabled: typeof disabledAt, deliveries: log.data.items.length, nextCursor, removed: removed.data.message };

const spec = await client.GET("/api/openapi.json");
if (spec.error) throw new Error("no document");
const version: string = spec.data.openapi;

console.log(JSON.stringify({ pending, listed: listed.length === 1 && listed[0] === id, total: page.data.total, message, status: one.data.status, email, deleted: deleted.data.message, goneStatus: gone.response.status, goneMessage, version, webhooks }));
`;

const t = suite<{ dir: string; server: NodeServer; key: string }>("OpenAPI: a client generated with openapi-typescript");

t.before(async (context) => {
  context.dir = mkdtempSync(join(tmpdir(), "formsink-generated-"));
  symlinkSync(join(ROOT, "node_modules"), join(context.dir, "node_modules"));
  const store = createMemoryStore();
  context.key = (await createApiKey(store, { account: "generated" })).key;
  context.server = await serve(createSubmissionsHandler(store), { port: 0 });
});

t.after(async ({ dir, server }) => {
  await server?.close();
  rmSync(dir, { recursive: true, force: true });
});

t("compiles in strict mode without casts and works for list, get, create, patch and delete, and for webhooks", async ({ dir, server, key }) => {
  const document = (await (await fetch(`${server.url}/api/openapi.json`)).json()) as OpenAPI3;
  writeFileSync(join(dir, "formsink-api.ts"), await openapiTS(document));
  writeFileSync(join(dir, "use.ts"), USE);
  writeFileSync(join(dir, "package.json"), JSON.stringify({ type: "module" }));
  writeFileSync(
    join(dir, "tsconfig.json"),
    JSON.stringify({
      compilerOptions: {
        target: "es2023", lib: ["es2023", "dom"], module: "nodenext", moduleResolution: "nodenext", strict: true,
        noUncheckedIndexedAccess: true, allowImportingTsExtensions: true, noEmit: true, types: ["node"],
      },
      files: ["use.ts"],
    }),
  );
  try {
    execFileSync(join(ROOT, "node_modules/.bin/tsc"), ["-p", "tsconfig.json"], { cwd: dir, encoding: "utf8", stdio: "pipe" });
  } catch (error) {
    assert.unreachable(`the generated client does not compile:\n${(error as { stdout: string }).stdout}`);
  }
  // Not execFileSync: the server it calls runs in this process.
  const { stdout: output } = await promisify(execFile)(process.execPath, ["--import", "tsx", "use.ts"], {
    cwd: dir, encoding: "utf8", env: { ...process.env, FORMSINK_URL: server.url, FORMSINK_KEY: key }, timeout: 60_000,
  });
  assert.equal(JSON.parse(output), {
    pending: "pending", listed: true, total: 1, message: "Submission status updated", status: "completed", email: "a@example.com",
    deleted: "Submission deleted", goneStatus: 404, goneMessage: "Submission not found", version: "3.1.0",
    webhooks: { secret: true, listed: 1, disabled: "string", deliveries: 0, nextCursor: null, removed: "Webhook deleted" },
  });
});

t.run();

import { suite } from "uvu";
import * as assert from "uvu/assert";
import { createApiKey } from "../../src/auth/keys.ts";
import { createSubmissionsHandler } from "../../src/handler.ts";
import type { LogEntry, SubmissionsHandlerOptions } from "../../src/options.ts";
import { UNKNOWN_CLIENT_ADDRESS_WARNING } from "../../src/rate-limit/unknown-address.ts";
import { createMemoryStore } from "../../src/stores/memory.ts";

const t = suite("rate limits without a client address");

async function creator(options: SubmissionsHandlerOptions = {}) {
  const store = createMemoryStore();
  const { key } = await createApiKey(store, { account: "host", kind: "publishable", domains: ["shop.example"] });
  const handler = createSubmissionsHandler(store, options);
  return (connection?: { clientAddress?: string }) =>
    handler(
      new Request("http://host.test/api/submission", {
        method: "POST",
        headers: { "x-api-key": key, origin: "https://shop.example", "content-type": "application/json" },
        body: JSON.stringify({ popupId: "p", data: {} }),
      }),
      connection,
    );
}

t("a handler called without a client address warns once, through options.log, naming the fix", async () => {
  const entries: LogEntry[] = [];
  const create = await creator({ log: (entry) => entries.push(entry) });
  for (let i = 0; i < 3; i++) assert.is((await create()).status, 201);
  const warnings = entries.filter((entry) => entry.type === "warning");
  assert.equal(warnings.map((entry) => [entry.method, entry.path, entry.error.message]), [["POST", "/api/submission", UNKNOWN_CLIENT_ADDRESS_WARNING]]);
  assert.match(UNKNOWN_CLIENT_ADDRESS_WARNING, /clientAddress/);
});

t("without options.log the warning goes to console.warn, once per handler", async () => {
  const warned: unknown[][] = [];
  const original = console.warn;
  console.warn = (...args: unknown[]) => warned.push(args);
  try {
    const first = await creator();
    const second = await creator();
    await first();
    await first();
    await second();
  } finally {
    console.warn = original;
  }
  assert.equal(warned, [[UNKNOWN_CLIENT_ADDRESS_WARNING], [UNKNOWN_CLIENT_ADDRESS_WARNING]]);
});

t("no warning when the address is known, or when no rate limit applies", async () => {
  const entries: LogEntry[] = [];
  const create = await creator({ log: (entry) => entries.push(entry) });
  assert.is((await create({ clientAddress: "203.0.113.7" })).status, 201);
  const unlimited = await creator({ log: (entry) => entries.push(entry), rateLimit: { publishable: false } });
  assert.is((await unlimited()).status, 201);
  assert.equal(entries.filter((entry) => entry.type === "warning"), []);
});

t.run();

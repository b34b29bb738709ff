/**
 * The handler's `limits` option as host apps fill it, often from their own configuration: a
 * limit given as `undefined` keeps its default (it must not lift the limit), and a value that
 * is not a whole number of at least 1 stops the handler from being made, naming the limit.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { createApiKey } from "../../src/auth/keys.ts";
import { createSubmissionsHandler } from "../../src/handler.ts";
import { DEFAULT_LIMITS, type Limits } from "../../src/options.ts";
import { createMemoryStore } from "../../src/stores/memory.ts";

const unset = (): number | undefined => undefined;

test("a limit given as undefined keeps its default: a body past it is still 413, data past it still 400", async () => {
  const store = createMemoryStore();
  const { key } = await createApiKey(store, { account: "limits" });
  const handler = createSubmissionsHandler(store, {
    limits: { maxBodyBytes: unset(), maxDataFields: unset(), maxDataKeyLength: unset(), maxDataDepth: unset() },
  });
  const create = (data: unknown) => handler(new Request("http://x/api/submission", {
    method: "POST", headers: { "x-api-key": key, "content-type": "application/json" }, body: JSON.stringify({ popupId: "p", data }),
  }));
  const large = await create({ text: "x".repeat(DEFAULT_LIMITS.maxBodyBytes) });
  assert.is(large.status, 413, await large.clone().text());
  const fields = Object.fromEntries(Array.from({ length: DEFAULT_LIMITS.maxDataFields + 1 }, (_, i) => [`f${i}`, i]));
  assert.is((await create(fields)).status, 400);
  assert.is((await create({ ["k".repeat(DEFAULT_LIMITS.maxDataKeyLength + 1)]: 1 })).status, 400);
  assert.is((await create({ a: { b: { c: { d: { e: 1 } } } } })).status, 400);
  assert.is((await create({ email: "a@example.com" })).status, 201);
});

test("a limit that is not a whole number of at least 1 is refused when the handler is made, naming it", () => {
  const store = createMemoryStore();
  const bad: [keyof Limits, unknown][] = [
    ["maxBodyBytes", Number.NaN],
    ["maxBodyBytes", "64kb"],
    ["maxDataFields", 0],
    ["maxDataKeyLength", 1.5],
    ["maxDataDepth", -1],
    ["maxBodyBytes", null],
  ];
  for (const [name, value] of bad) {
    assert.throws(
      () => createSubmissionsHandler(store, { limits: { [name]: value } as Partial<Limits> }),
      (error: unknown) => error instanceof TypeError && error.message === `limits.${name} must be a whole number of at least 1 (got ${String(value)})`,
      `${name}: ${String(value)}`,
    );
  }
  createSubmissionsHandler(store, { limits: { maxBodyBytes: 1, maxDataDepth: 1 } });
});

test.run();

/**
 * The list's query read without arktype (src/routes/list-parameters.ts) against `listQuery`,
 * which the OpenAPI document describes and which words every 400: whatever the fast reading
 * accepts, it must read exactly as `listQuery` does, keys and their order included (the filter
 * goes into cursors as it is), and it must accept the queries a client sends every day.
 */
import { type } from "arktype";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { LIST_QUERY_PARAMETERS, readListParameters } from "../../src/routes/list-parameters.ts";
import { listQuery, queryParameters } from "../../src/schemas.ts";

const VALUES: Record<string, string[]> = {
  limit: ["1", "10", "100", "0", "101", "007", "1e1", "10.0", " 5", "", "-1", "abc", "99999999999999999999"],
  offset: ["0", "5", "500000", String(Number.MAX_SAFE_INTEGER), "9007199254740992", "-0", "1.5", ""],
  orderBy: ["created_at", "created_at_desc", "CREATED_AT", "", "asc"],
  createdAfter: ["2025-07-12T10:30:00Z", "2025-07-12T10:30:00.123+02:00", "2025-02-30T00:00:00Z", "2025-07-12", "2025-07-12T10:30Z", "", "x"],
  createdBefore: ["2025-07-12T10:30:00.5Z", "2025-07-12T10:30:00.123456-05:30", "2024-02-29T23:59:60Z", "2025-13-01T00:00:00Z", "tomorrow"],
  cursor: ["", "abc", "eyJ2IjoxfQ", "%%%"],
  device: ["mobile", "desktop", "x".repeat(128), "x".repeat(129), "", "😀".repeat(128), "😀".repeat(129)],
  domain: ["example.com", "x".repeat(512), "x".repeat(513), "", "\ud800"],
  popupId: ["p1", "x".repeat(256), "😀".repeat(256), "😀".repeat(257), "", " "],
  status: ["pending", "completed", "PENDING", "", "deleted"],
};

/** Every parameter's values alone, then a few hundred mixtures, from a fixed seed. */
function queries(): Record<string, string>[] {
  const all: Record<string, string>[] = [{}];
  for (const [name, values] of Object.entries(VALUES)) for (const value of values) all.push({ [name]: value });
  let seed = 7;
  const random = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
  for (let i = 0; i < 600; i++) {
    const query: Record<string, string> = {};
    // In the order the route reads them from the URL (singleValuedQuery).
    for (const name of LIST_QUERY_PARAMETERS) {
      if (random() < 0.4) query[name] = VALUES[name]![Math.floor(random() * VALUES[name]!.length)]!;
    }
    all.push(query);
  }
  return all;
}

test("the route reads the parameters listQuery has, in its order", () => {
  assert.equal([...LIST_QUERY_PARAMETERS], queryParameters(listQuery));
});

test("what the fast reading accepts, it reads exactly as listQuery does", () => {
  let read = 0;
  for (const query of queries()) {
    const fast = readListParameters(query);
    if (fast === undefined) continue;
    read++;
    const checked = listQuery(query);
    assert.not.instance(checked, type.errors, `listQuery refuses ${JSON.stringify(query)}, which the fast reading took`);
    assert.is(JSON.stringify(fast), JSON.stringify(checked), `read differently: ${JSON.stringify(query)}`);
  }
  assert.ok(read > 100, `the fast reading took only ${read} queries`);
});

test("the fast reading takes every query listQuery accepts among common ones", () => {
  const common: Record<string, string>[] = [
    {},
    { limit: "50" },
    { offset: "20", limit: "10" },
    { orderBy: "created_at", status: "pending" },
    { createdAfter: "2025-01-01T00:00:00Z", createdBefore: "2025-02-01T00:00:00.000+01:00", popupId: "spring-sale" },
    { cursor: "abc", device: "mobile", domain: "shop.example" },
  ];
  for (const query of common) assert.ok(readListParameters(query), `not read: ${JSON.stringify(query)}`);
});

test.run();

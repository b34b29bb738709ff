/**
 * The memory store's row text (submission-text.ts) is what every read and export hands out, so
 * it must be exactly the text `JSON.stringify` gives, the contract's keys first in their order,
 * for any record an import may bring: ordinary ones, strings that need escaping, values JSON
 * writes otherwise than they look, and records of an unusual shape.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { generateSubmissions } from "../../bench/support/dataset.ts";
import { submissionToText } from "../../src/stores/memory/submission-text.ts";
import type { Submission } from "../../src/submission.ts";

function expectedText(s: Submission): string {
  const { submissionId, popupId, data, domain, userAgent, device, status, createdAt, ...added } = s;
  return JSON.stringify({ submissionId, popupId, data, domain, userAgent, device, status, createdAt, ...added });
}

const base = (): Submission => ({
  submissionId: "01941f29-7c00-77fb-80f7-479cb86dfe74",
  popupId: "popup_2",
  data: { email: "visitor0@example.com", consent: true },
  domain: "example.com",
  userAgent: "Mozilla/5.0 (X11; Linux x86_64)",
  device: "desktop",
  status: "pending",
  createdAt: "2025-01-01T00:00:00.000Z",
});

const AWKWARD_STRINGS = [
  "", 'a "quoted" word', "back\\slash", "line\nbreak", "tab\there", "\u0000", "\u0001\u001f", "\u007f", "\u2028\u2029",
  "é and ü", "\ud83d\ude00 paired", "lone \ud800 high", "lone \udfff low", "ends high \ud83d", "\udc00 starts low", "</script>", "a/b",
];
const AWKWARD_VALUES: unknown[] = [
  0, -0, 1.5, 1e21, 1e-7, Number.NaN, Number.POSITIVE_INFINITY, null, false, [], [1, "two", null, { three: 3 }], { nested: { deeper: ["x\"y"] } },
  undefined, () => 1, Symbol("s"), new Date(Date.UTC(2025, 0, 2)), { toJSON: (key: string) => `key ${key}` }, Object.create(null) as object, new String("boxed"),
];

test("ordinary records: the dataset's rows as JSON.stringify writes them", () => {
  for (const s of generateSubmissions(2000, 7)) assert.is(submissionToText(s), expectedText(s));
});

test("strings that need escaping, in every field and as data keys and values", () => {
  for (const text of AWKWARD_STRINGS) {
    for (const field of ["submissionId", "popupId", "domain", "userAgent", "device", "status", "createdAt"] as const) {
      const s = base();
      (s as unknown as Record<string, string>)[field] = text;
      assert.is(submissionToText(s), expectedText(s), `${field}: ${JSON.stringify(text)}`);
    }
    const asValue = { ...base(), data: { plain: "x", [text]: text } };
    assert.is(submissionToText(asValue), expectedText(asValue), `data: ${JSON.stringify(text)}`);
  }
});

test("data values JSON writes otherwise than they look, and keys it reorders", () => {
  for (const value of AWKWARD_VALUES) {
    const s = { ...base(), data: { before: "b", odd: value, after: 1 } } as unknown as Submission;
    assert.is(submissionToText(s), expectedText(s), String(typeof value === "symbol" ? "symbol" : JSON.stringify(value)));
  }
  const reordered = { ...base(), data: { b: 1, 2: "two", a: "x", 1: "one", __proto__: "p" } } as unknown as Submission;
  assert.is(submissionToText(reordered), expectedText(reordered));
  const own = base();
  Object.defineProperty(own.data, "__proto__", { value: "own", enumerable: true });
  assert.is(submissionToText(own), expectedText(own));
});

test("records of an unusual shape: keys out of order, fields added, non-string fields, data that is no plain object", () => {
  const b = base();
  const shapes: unknown[] = [
    { createdAt: b.createdAt, status: b.status, device: b.device, userAgent: b.userAgent, domain: b.domain, data: b.data, popupId: b.popupId, submissionId: b.submissionId },
    { ...b, deletedAt: "2025-02-01T00:00:00.000Z" },
    { ...b, status: 3 },
    { ...b, userAgent: undefined },
    { ...b, data: ["array"] },
    { ...b, data: new String("boxed") },
    { ...b, data: null },
    { ...b, data: Object.assign(Object.create(null) as object, { a: "null prototype" }) },
    { ...b, data: { toJSON: () => ({ replaced: true }) } },
    { ...b, data: new Map([["a", 1]]) },
    Object.assign(Object.create({ createdAt: b.createdAt }) as object, { ...b, createdAt: undefined }),
  ];
  for (const shape of shapes) assert.is(submissionToText(shape as Submission), expectedText(shape as Submission), JSON.stringify(shape));
});

test.run();

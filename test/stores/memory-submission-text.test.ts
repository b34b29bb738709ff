/**
 * The memory store's row text (submission-text.ts) is what every read and export hands out, so
 * it must be exactly the text `JSON.stringify` gives, the contract's keys first in their order,
 * for any record an import may bring: ordinary ones, strings that need escaping, values JSON
 * writes otherwise than they look, and records of an unusual shape. Each case is checked both as
 * the string and as the row's text column keeps it (written straight into its block as UTF-8
 * when it can be: `writeSubmissionText`).
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { generateSubmissions, seededRandom } from "../../bench/support/dataset.ts";
import { submissionToText as stringText, writeSubmissionText } from "../../src/stores/memory/submission-text.ts";
import { TextColumn } from "../../src/stores/memory/text-column.ts";
import type { Submission } from "../../src/submission.ts";

function expectedText(s: Submission): string {
  const { submissionId, popupId, data, domain, userAgent, device, status, createdAt, ...added } = s;
  return JSON.stringify({ submissionId, popupId, data, domain, userAgent, device, status, createdAt, ...added });
}

/** The text as a string, and as the text column reads it back; the same text, or the first of them. */
function submissionToText(s: Submission): string {
  const text = stringText(s);
  const column = new TextColumn();
  column.ensureCapacity(2);
  // a first row, so that the second is written into a block that has one already
  column.write(s);
  column.place(0);
  column.write(s);
  column.place(1);
  const kept = column.get(1);
  return kept === text ? text : `${text} (the column keeps ${kept})`;
}

/** The bytes `writeSubmissionText` writes, decoded; undefined when it leaves the record to the string. */
function writtenText(s: Submission): string | undefined {
  const bytes = new Uint8Array(1 << 16);
  const end = writeSubmissionText(s, bytes, 7);
  return end < 0 ? undefined : new TextDecoder().decode(bytes.subarray(7, end));
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

test("records of the usual shape, with strings that need no escaping in any script, are written straight into the block", () => {
  for (const s of generateSubmissions(200, 3)) assert.is(writtenText(s), expectedText(s));
  for (const text of ["", "é and ü", "\u0800 \uffff \u00a0", "\ud83d\ude00 paired", "\udbff\udfff", "</script>", "a/b", "\u007f"]) {
    const s = { ...base(), userAgent: text, data: { [text]: text, n: 1.5, none: null, list: ["\ud83d\ude00", "x\"y"] } };
    assert.is(writtenText(s), expectedText(s), JSON.stringify(text));
  }
});

test("a domain, user agent, device and status met before are copied as they were written, past the number kept too, and never for another", () => {
  const column = new TextColumn();
  const rows: Submission[] = [];
  // more domains than a column keeps tails for, and more combinations per domain, most met
  // several times; values that are prefixes of others, and ones JSON escapes (a line break could
  // join two apart)
  const random = seededRandom(5);
  const pick = (count: number) => Math.floor(random() * count);
  for (let i = 0; i < 3000; i++) {
    const agent = pick(4) === 0 ? pick(200) : pick(6);
    rows.push({
      ...base(),
      submissionId: `id-${i}`,
      domain: `site${pick(4) === 0 ? pick(100) : pick(3)}.example${pick(40) === 0 ? "\n" : ""}`,
      userAgent: `Agent/${agent}${agent % 3 === 0 ? " (é)" : ""}`,
      device: (["desktop", "mobile", "tablet", "bot"] as const)[pick(4)]!,
      status: pick(2) === 0 ? "completed" : "pending",
    });
  }
  rows.push({ ...base(), domain: "a", userAgent: "b\nc" }, { ...base(), domain: "a\nb", userAgent: "c" }, { ...base(), domain: "a", userAgent: "b\nc" });
  column.ensureCapacity(rows.length);
  rows.forEach((row, slot) => {
    column.write(row);
    column.place(slot);
  });
  rows.forEach((row, slot) => assert.is(column.get(slot), expectedText(row)));
});

test("keys of data met before are copied as they were written, past the number kept, with each kind of value", () => {
  const column = new TextColumn();
  const rows: Submission[] = [];
  // more keys than a column keeps, some met again and again, some JSON escapes or writes as
  // more than one byte a character; values of every kind a key is written before
  const random = seededRandom(9);
  const pick = (count: number) => Math.floor(random() * count);
  const keys = Array.from({ length: 150 }, (_, i) => (i % 7 === 0 ? `k\u00e9${i}` : i % 11 === 0 ? `k"${i}` : `key${i}`));
  const values = ["text", true, false, 12, null, ["a"], { b: 1 }, undefined];
  for (let i = 0; i < 2000; i++) {
    const data: Record<string, unknown> = {};
    for (let n = pick(6); n >= 0; n--) data[keys[pick(3) === 0 ? pick(keys.length) : pick(8)]!] = values[pick(values.length)];
    rows.push({ ...base(), submissionId: `id-${i}`, data: data as Submission["data"] });
  }
  column.ensureCapacity(rows.length);
  rows.forEach((row, slot) => {
    column.write(row);
    column.place(slot);
  });
  rows.forEach((row, slot) => assert.is(column.get(slot), expectedText(row)));
});

test("a text that may not fit in what is left of the block is left to the string", () => {
  const s = base();
  const bytes = new Uint8Array(expectedText(s).length + 20);
  assert.is(writeSubmissionText(s, bytes, 0), -1);
  assert.ok(writeSubmissionText(s, new Uint8Array(4 * expectedText(s).length), 0) > 0);
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

test("a key every object inherits enumerably is left out of data, as JSON leaves it out", () => {
  // A record without a prototype passes the check of its own keys whatever Object.prototype holds.
  const s = Object.assign(Object.create(null) as object, base()) as Submission;
  Object.defineProperty(Object.prototype, "inherited", { value: "from the prototype", enumerable: true, configurable: true });
  try {
    assert.is(writtenText(s), expectedText(s));
    assert.is(submissionToText(s), expectedText(s));
    assert.not.match(expectedText(s), "inherited");
  } finally {
    delete (Object.prototype as { inherited?: unknown }).inherited;
  }
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

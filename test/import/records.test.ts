import { suite } from "uvu";
import * as assert from "uvu/assert";
import type { ImportRecord } from "../../src/import/records.ts";
import { awkwardSubmissions, records, submissionsOf } from "./support.ts";

const errorsOf = (list: ImportRecord[]) =>
  list.flatMap((record) => ("error" in record ? [{ line: record.line, where: record.where, error: record.error }] : []));

const VALID = {
  submissionId: "0193f5c2-7b8e-7cc1-9a1e-4f1f9d6f0c11", popupId: "p", data: { email: "a@example.com" }, domain: "example.com",
  userAgent: "ua", device: "desktop", status: "pending", createdAt: "2025-07-12T10:30:00.000Z",
};
const line = (changes: object) => JSON.stringify({ ...VALID, ...changes });

const ndjson = suite("import: NDJSON");

ndjson("the export's lines read back exactly, at any chunk size, CRLF or LF, blank lines skipped", async () => {
  const submissions = awkwardSubmissions();
  const text = submissions.map((s) => `${JSON.stringify(s)}\n`).join("");
  for (const size of [1, 13, text.length]) assert.equal(submissionsOf(await records("ndjson", text, size)), submissions);
  const crlf = `\uFEFF${JSON.stringify(submissions[0])}\r\n\r\n${JSON.stringify(submissions[1])}`;
  const read = await records("ndjson", crlf, 3);
  assert.equal(read.map((r) => r.line), [1, 3]);
  assert.equal(submissionsOf(read), submissions.slice(0, 2));
});

ndjson("every record goes through the API's checks; each bad one is reported with its line", async () => {
  const bad: [string, RegExp][] = [
    ["{not json", /not valid JSON/],
    [line({ color: "red" }), /color is not a known submission field/],
    [line({ submissionId: "not-a-uuid" }), /submissionId/],
    [line({ submissionId: VALID.submissionId.toUpperCase() }), /submissionId/],
    [line({ createdAt: "2025-07-12T10:30:00Z" }), /createdAt/],
    [line({ createdAt: "2025-02-30T10:30:00.000Z" }), /createdAt must be a real date and time/],
    [line({ device: "phone" }), /device/],
    [line({ status: "archived" }), /status/],
    [line({ popupId: "" }), /popupId/],
    [line({ popupId: "p".repeat(257) }), /popupId/],
    [line({ domain: "d".repeat(513) }), /domain/],
    [line({ data: [1] }), /data/],
    [line({ data: { a: { b: { c: { d: {} } } } } }), /nested too deeply/],
    [line({ data: Object.fromEntries(Array.from({ length: 101 }, (_, i) => [`f${i}`, i])) }), /at most 100 fields/],
    ['{"submissionId":"0193f5c2-7b8e-7cc1-9a1e-4f1f9d6f0c11","popupId":"p","data":{"__proto__":1},"domain":"","userAgent":"","device":"bot","status":"pending","createdAt":"2025-07-12T10:30:00.000Z"}', /__proto__/],
    [line({ data: { name: "\ud800" } }), /not valid Unicode.*data\.name/],
    [line({ data: undefined }), /data must be/],
    ["[1,2]", /must be an object/],
  ];
  const text = [line({}), ...bad.map(([text]) => text), line({ submissionId: "0193f5c2-7b8e-7cc1-9a1e-4f1f9d6f0c12" })].join("\n");
  const read = await records("ndjson", text);
  assert.is(read.length, bad.length + 2);
  const errors = errorsOf(read);
  assert.equal(errors.map((e) => e.line), bad.map((_, i) => i + 2));
  errors.forEach((error, i) => assert.match(error.error, bad[i]![1], `line ${error.line}: ${error.error}`));
  assert.equal(submissionsOf([read[0]!, read.at(-1)!]).map((s) => s.submissionId), [VALID.submissionId, "0193f5c2-7b8e-7cc1-9a1e-4f1f9d6f0c12"]);
});

const pages = suite("import: saved list pages");

pages("pages saved one after another, pretty or not, give their items with the line each page starts on", async () => {
  const items = awkwardSubmissions();
  const first = JSON.stringify({ items: items.slice(0, 3), limit: 3, offset: 0, total: items.length }, null, 2);
  const second = JSON.stringify({ items: items.slice(3), limit: 100, offset: 3, total: items.length });
  const text = `${first}\n${second}\n\n${JSON.stringify({ items: [], limit: 10, offset: 500, total: items.length })}`;
  for (const size of [1, 50, text.length]) {
    const read = await records("pages", text, size);
    assert.equal(submissionsOf(read), items);
    const secondLine = first.split("\n").length + 1;
    assert.equal(read.map((r) => [r.line, r.where]), [
      ...items.slice(0, 3).map((_, i) => [1, `items[${i}]`]),
      ...items.slice(3).map((_, i) => [secondLine, `items[${i}]`]),
    ]);
  }
});

pages("the seed's items are taken in formsink's form: ids lower-cased, times with milliseconds, devices mapped", async () => {
  const item = {
    ...VALID, submissionId: VALID.submissionId.toUpperCase(), createdAt: "2025-07-12T12:30:00+02:00", device: "Desktop",
  };
  const phone = { ...VALID, submissionId: "0193f5c2-7b8e-7cc1-9a1e-4f1f9d6f0c12", device: "smartphone", userAgent: "Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) Mobile/15E148" };
  const read = await records("pages", JSON.stringify({ items: [item, phone], limit: 10, offset: 0, total: 2 }));
  assert.equal(submissionsOf(read), [
    { ...VALID, createdAt: "2025-07-12T10:30:00.000Z", device: "desktop" },
    { ...phone, device: "mobile" },
  ]);
  assert.equal(read.map((r) => ("adjusted" in r ? r.adjusted : undefined)), ['device "Desktop" taken as desktop', 'device "smartphone" taken as mobile']);
  // a time finer than a millisecond cannot be kept: refused, not rounded
  const fine = await records("pages", JSON.stringify({ items: [{ ...VALID, createdAt: "2025-07-12T10:30:00.0001Z" }] }));
  assert.match(errorsOf(fine)[0]!.error, /createdAt/);
});

pages("what is not a page, or is cut off, is an error with its line", async () => {
  assert.equal(errorsOf(await records("pages", '{"items":[]}\n{"message":"API key is required"}')), [
    { line: 2, where: undefined, error: "not a list page: expected an object with an items array, as GET /api/submission answers" },
  ]);
  assert.equal(errorsOf(await records("pages", '{"items":[\n')), [{ line: 1, where: undefined, error: "the JSON value that starts here is cut off at the end of the file" }]);
  assert.equal(errorsOf(await records("pages", '\n\nnull')), [{ line: 3, where: undefined, error: 'expected a JSON object (a saved list page), found "n"' }]);
  const badItem = await records("pages", JSON.stringify({ items: [VALID, { ...VALID, status: "x" }] }));
  assert.equal(errorsOf(badItem).map((e) => [e.line, e.where]), [[1, "items[1]"]]);
  // braces inside strings do not end a page
  const tricky = { ...VALID, data: { text: '} { "items": [ ] \\" }' } };
  assert.equal(submissionsOf(await records("pages", JSON.stringify({ items: [tricky] }), 1)), [tricky]);
});

ndjson.run();
pages.run();

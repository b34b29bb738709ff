import { test } from "uvu";
import * as assert from "uvu/assert";
import { isSubmissionId, newSubmissionId } from "../../src/id.ts";

test("ids are canonical UUIDv7 carrying their creation time", () => {
  const now = Date.UTC(2025, 6, 12, 10, 30);
  const id = newSubmissionId(now);
  assert.ok(isSubmissionId(id), id);
  assert.is(id[14], "7", "version nibble");
  assert.ok("89ab".includes(id[19]!), "variant bits");
  assert.is(parseInt(id.replace(/-/g, "").slice(0, 12), 16), now);
});

test("ids made in one millisecond are unique and sort in the order they were made", () => {
  const now = Date.UTC(2030, 0, 1);
  const ids = Array.from({ length: 5000 }, () => newSubmissionId(now));
  assert.is(new Set(ids).size, ids.length);
  assert.equal([...ids].sort(), ids);
});

test("isSubmissionId refuses anything but canonical lower-case UUID text", () => {
  for (const text of ["", "abc", "01A20684-6E60-7368-9636-DD2E2B9CE6E9", "01a206846e6073689636dd2e2b9ce6e9", "01a20684-6e60-7368-9636-dd2e2b9ce6e9 "]) {
    assert.not.ok(isSubmissionId(text), text);
  }
});

test.run();

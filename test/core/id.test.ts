import { test } from "uvu";
import * as assert from "uvu/assert";
import { createSubmissionIdGenerator, isSubmissionId } from "../../src/id.ts";

const timeOf = (id: string) => parseInt(id.replace(/-/g, "").slice(0, 12), 16);

test("ids are canonical UUIDv7 carrying their creation time", () => {
  const now = Date.UTC(2025, 6, 12, 10, 30);
  const { id, millis } = createSubmissionIdGenerator(() => now)();
  assert.ok(isSubmissionId(id), id);
  assert.is(id[14], "7", "version nibble");
  assert.ok("89ab".includes(id[19]!), "variant bits");
  assert.is(timeOf(id), now);
  assert.is(millis, now);
});

test("ids made in one millisecond are unique and sort in the order they were made", () => {
  const next = createSubmissionIdGenerator(() => Date.UTC(2030, 0, 1));
  const made = Array.from({ length: 5000 }, next);
  const ids = made.map((m) => m.id);
  assert.is(new Set(ids).size, ids.length);
  assert.equal([...ids].sort(), ids);
  // past the 12-bit counter, ids borrow the next millisecond, and say so
  assert.ok(made.every((m) => m.millis === timeOf(m.id)));
  assert.ok(made.at(-1)!.millis > Date.UTC(2030, 0, 1));
});

test("when the clock steps back, ids (and their times) do not", () => {
  let now = Date.UTC(2025, 6, 12, 10, 30);
  const next = createSubmissionIdGenerator(() => now);
  const before = next();
  now -= 60_000;
  const after = next();
  assert.ok(after.id > before.id);
  assert.is(after.millis, before.millis);
  now += 120_000;
  assert.is(next().millis, now);
});

test("generators share no state", () => {
  const future = createSubmissionIdGenerator(() => Date.UTC(2030, 0, 1));
  future();
  const now = Date.UTC(2025, 6, 12);
  assert.is(createSubmissionIdGenerator(() => now)().millis, now);
});

test("isSubmissionId refuses anything but canonical lower-case UUID text", () => {
  for (const text of ["", "abc", "01A20684-6E60-7368-9636-DD2E2B9CE6E9", "01a206846e6073689636dd2e2b9ce6e9", "01a20684-6e60-7368-9636-dd2e2b9ce6e9 "]) {
    assert.not.ok(isSubmissionId(text), text);
  }
});

test.run();

import { test } from "uvu";
import * as assert from "uvu/assert";
import { parseInstant } from "../../src/instant.ts";

test("UTC and offset instants become epoch milliseconds", () => {
  assert.is(parseInstant("2025-07-12T10:30:00Z"), Date.UTC(2025, 6, 12, 10, 30));
  assert.is(parseInstant("2025-07-12T10:30:00.123Z"), Date.UTC(2025, 6, 12, 10, 30, 0, 123));
  assert.is(parseInstant("2025-07-12T12:30:00+02:00"), Date.UTC(2025, 6, 12, 10, 30));
  assert.is(parseInstant("2025-07-12T05:00-05:30"), Date.UTC(2025, 6, 12, 10, 30));
  assert.is(parseInstant("2024-02-29T00:00:00Z"), Date.UTC(2024, 1, 29));
});

test("digits past the millisecond are kept as a fraction", () => {
  assert.is(parseInstant("2025-07-12T10:30:00.1234Z"), Date.UTC(2025, 6, 12, 10, 30, 0, 123) + 0.4);
});

test("years below 100 are taken as written", () => {
  assert.is(new Date(parseInstant("0050-01-01T00:00:00Z")!).getUTCFullYear(), 50);
});

test("anything that is not a whole instant with a zone is refused", () => {
  for (const text of [
    "", "2025-07-12", "2025-07-12T10:30:00", "2025-07-12 10:30:00Z", "2025-02-30T00:00:00Z", "2023-02-29T00:00:00Z",
    "2025-13-01T00:00:00Z", "2025-07-12T24:00:00Z", "2025-07-12T10:60:00Z", "2025-07-12T10:30:61Z",
    "2025-07-12T10:30:00+25:00", "1752316200000", "yesterday", "2025-07-12T10:30:00.Z",
  ]) {
    assert.is(parseInstant(text), undefined, text);
  }
});

test.run();

import { test } from "uvu";
import * as assert from "uvu/assert";
import { afterBound, beforeBound, formatInstant, parseInstant } from "../../src/instant.ts";

const millisOf = (text: string) => parseInstant(text)?.millis;

test("UTC and offset instants become epoch milliseconds", () => {
  assert.is(millisOf("2025-07-12T10:30:00Z"), Date.UTC(2025, 6, 12, 10, 30));
  assert.is(millisOf("2025-07-12T10:30:00.123Z"), Date.UTC(2025, 6, 12, 10, 30, 0, 123));
  assert.is(millisOf("2025-07-12T10:30:00.5Z"), Date.UTC(2025, 6, 12, 10, 30, 0, 500));
  assert.is(millisOf("2025-07-12T12:30:00+02:00"), Date.UTC(2025, 6, 12, 10, 30));
  assert.is(millisOf("2025-07-12T05:00:00-05:30"), Date.UTC(2025, 6, 12, 10, 30));
  assert.is(millisOf("2024-02-29T00:00:00Z"), Date.UTC(2024, 1, 29));
});

test("digits past the millisecond are honoured exactly, however many there are", () => {
  const ms = Date.UTC(2026, 10, 23, 7, 4, 51, 796);
  // A double would round .7960001 back onto .796; the bounds must not.
  for (const fraction of ["7960001", "7960000000000001", "79600000000000000000009"]) {
    const instant = parseInstant(`2026-11-23T07:04:51.${fraction}Z`)!;
    assert.equal(instant, { millis: ms, insideMillis: true }, fraction);
    assert.is(afterBound(instant), ms, "t > .796x holds for t = .797 and later: t > .796");
    assert.is(beforeBound(instant), ms + 1, "t < .796x holds for t = .796 and earlier: t < .797");
  }
  const whole = parseInstant("2026-11-23T07:04:51.796000Z")!;
  assert.equal(whole, { millis: ms, insideMillis: false });
  assert.is(afterBound(whole), ms);
  assert.is(beforeBound(whole), ms);
});

test("RFC 3339 as JSON Schema's date-time: t and z in lower case", () => {
  assert.is(millisOf("2025-07-12t10:30:00z"), Date.UTC(2025, 6, 12, 10, 30));
  assert.is(millisOf("2025-07-12t12:30:00.5+02:00"), Date.UTC(2025, 6, 12, 10, 30, 0, 500));
});

test("a leap second lies after 23:59:59.999 UTC and before the next midnight", () => {
  const midnight = Date.UTC(2017, 0, 1);
  for (const text of ["2016-12-31T23:59:60Z", "2016-12-31T23:59:60.5Z", "2017-01-01T00:59:60+01:00", "2016-12-31T18:29:60-05:30"]) {
    const instant = parseInstant(text)!;
    assert.equal(instant, { millis: midnight - 1, insideMillis: true }, text);
    assert.is(afterBound(instant), midnight - 1, "after it: from midnight on");
    assert.is(beforeBound(instant), midnight, "before it: up to 23:59:59.999");
  }
  assert.is(parseInstant("2016-12-31T23:58:60Z"), undefined, "only the last minute of a UTC day has a second 60");
  assert.is(parseInstant("2016-12-31T23:59:60+01:00"), undefined);
});

test("years below 100 are taken as written", () => {
  assert.is(new Date(millisOf("0050-01-01T00:00:00Z")!).getUTCFullYear(), 50);
});

test("anything that is not a whole instant with a zone is refused", () => {
  for (const text of [
    "", "2025-07-12", "2025-07-12T10:30:00", "2025-07-12 10:30:00Z", "2025-02-30T00:00:00Z", "2023-02-29T00:00:00Z",
    "2025-13-01T00:00:00Z", "2025-07-12T24:00:00Z", "2025-07-12T10:60:00Z", "2025-07-12T10:30:61Z",
    "2025-07-12T10:30:00+25:00", "1752316200000", "yesterday", "2025-07-12T10:30:00.Z", "2025-07-12T10:30Z",
    "2025-07-12T05:00-05:30", "2025-07-12x10:30:00Z", "2025-07-12T10:30:00Y",
  ]) {
    assert.is(parseInstant(text), undefined, text);
  }
});

test("formatInstant writes what toISOString does, for every year from 0 to 9999", () => {
  const first = new Date(0).setUTCFullYear(0, 0, 1);
  const last = new Date(0).setUTCFullYear(9999, 11, 31) + 86_399_999;
  const edges = [first, last, 0, -1, 1, Date.UTC(2000, 1, 29, 23, 59, 59, 999), Date.UTC(1900, 1, 28), Date.UTC(2100, 2, 1), Date.UTC(1969, 11, 31, 23, 59, 59, 999)];
  // a fixed pseudo-random sequence, so that a failure can be reproduced
  let seed = 42;
  const next = () => (seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648) / 2_147_483_648;
  const samples = [...edges, ...Array.from({ length: 200_000 }, () => Math.floor(first + next() * (last - first)))];
  for (const millis of samples) assert.is(formatInstant(millis), new Date(millis).toISOString(), String(millis));
});

test("formatInstant in time order, as exports call it: within a day and across midnights", () => {
  for (const midnight of [Date.UTC(2025, 6, 12), 0, Date.UTC(1969, 11, 31), Date.UTC(2024, 1, 29)]) {
    for (let millis = midnight - 3_600_000; millis < midnight + 90_000_000; millis += 997_331) {
      assert.is(formatInstant(millis), new Date(millis).toISOString(), String(millis));
    }
    assert.is(formatInstant(midnight - 1), new Date(midnight - 1).toISOString());
    assert.is(formatInstant(midnight), new Date(midnight).toISOString());
  }
});

test.run();

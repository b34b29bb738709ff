/**
 * The memory store orders rows by `Date.parse(createdAt)` (created-time.ts reads the usual form
 * by hand): a different time would put a row in the wrong place of every list, and a text
 * Date.parse refuses must still be refused.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { timeOf } from "../../src/stores/memory/created-time.ts";
import type { Submission } from "../../src/submission.ts";

const timeOfText = (createdAt: string) => {
  try {
    return timeOf({ submissionId: "s", createdAt } as Submission);
  } catch {
    return Number.NaN;
  }
};
const pad = (value: number, width: number) => String(value).padStart(width, "0");

test("every day of the month, leap years and rolled-over days, each time field at its bounds: the time Date.parse gives", () => {
  for (const year of [1969, 1970, 1999, 2000, 2024, 2025, 2100, 9999]) {
    for (let month = 0; month <= 13; month++) {
      for (let day = 0; day <= 32; day++) {
        const text = `${pad(year, 4)}-${pad(month, 2)}-${pad(day, 2)}T12:34:56.789Z`;
        assert.equal(timeOfText(text), Date.parse(text), text);
      }
    }
  }
  for (const hour of [0, 23, 24, 25]) {
    for (const minute of [0, 59, 60]) {
      for (const second of [0, 59, 60]) {
        for (const millis of ["000", "999"]) {
          const text = `2025-03-01T${pad(hour, 2)}:${pad(minute, 2)}:${pad(second, 2)}.${millis}Z`;
          assert.equal(timeOfText(text), Date.parse(text), text);
        }
      }
    }
  }
});

test("other forms are read as Date.parse reads them, and a text it refuses is refused", () => {
  const texts = [
    "1970-01-01T00:00:00.000Z", "2025-01-02T03:04:05Z", "2025-01-02T03:04:05.6789Z", "2025-01-02t03:04:05.678z", "2025-01-02T03:04:05.678+02:00",
    "2025-01-02 03:04:05.678Z", "+002025-01-02T03:04:05.678Z", "2025-01-02", "2025-1-02T03:04:05.678Z", "2025-01-02T03:04:05.67xZ", "2025-01-0xT03:04:05.678Z",
    "2025/01/02T03:04:05.678Z", "0099-01-02T03:04:05.678Z", "", "not a time", "2025-01-02T03:04:05.678Z ",
  ];
  for (const text of texts) assert.equal(timeOfText(text), Date.parse(text), JSON.stringify(text));
  assert.throws(() => timeOf({ submissionId: "s", createdAt: "not a time" } as Submission), /createdAt is not a time/);
});

test.run();

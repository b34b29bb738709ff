/**
 * A row's time, `Date.parse(submission.createdAt)`: its place in the list order. Every row
 * written reads one, so the form formsink itself writes (`2025-01-02T03:04:05.678Z`) is read by
 * hand, and any other text is left to `Date.parse` (bench/store.ts, target 8: bulk load).
 */
import type { Submission } from "../../submission.ts";

/** The row's place in the list order; a time that does not parse would corrupt every list. */
export function timeOf(submission: Submission): number {
  const text = submission.createdAt;
  const time = (typeof text === "string" && writtenTime(text)) || Date.parse(text);
  if (Number.isNaN(time)) throw new RangeError(`submission ${submission.submissionId}: createdAt is not a time`);
  return time;
}

/**
 * `Date.parse(text)` for a text of exactly the form `YYYY-MM-DDTHH:MM:SS.mmmZ` with a year from
 * 1970 (earlier ones are left to `Date.parse`) and each field in the range `Date.parse`
 * takes (a day up to 31 in any month rolls over as it does there); 0 for any other text,
 * which the caller then gives to `Date.parse` (which is also right for the epoch itself).
 */
function writtenTime(text: string): number {
  if (text.length !== 24 || text.charCodeAt(4) !== 45 || text.charCodeAt(7) !== 45 || text.charCodeAt(10) !== 84) return 0;
  if (text.charCodeAt(13) !== 58 || text.charCodeAt(16) !== 58 || text.charCodeAt(19) !== 46 || text.charCodeAt(23) !== 90) return 0;
  const year = digits(text, 0, 4);
  const month = digits(text, 5, 2);
  const day = digits(text, 8, 2);
  const hour = digits(text, 11, 2);
  const minute = digits(text, 14, 2);
  const second = digits(text, 17, 2);
  const millisecond = digits(text, 20, 3);
  if (year < 1970 || month < 1 || month > 12 || day < 1 || day > 31) return 0;
  if (hour < 0 || hour > 23 || minute < 0 || minute > 59 || second < 0 || second > 59 || millisecond < 0) return 0;
  return (daysSinceEpoch(year, month) + day - 1) * DAY + hour * 3_600_000 + minute * 60_000 + second * 1000 + millisecond;
}

const DAY = 86_400_000;

/**
 * The days from 1970-01-01 to the first of the month (a year from 1970, a month 1 to 12), as
 * `Date.UTC` counts them: arithmetic rather than a call into the runtime for every row. March
 * starts the year here, so that February's length only matters at its end (Howard Hinnant's
 * `days_from_civil`).
 */
function daysSinceEpoch(year: number, month: number): number {
  const shifted = month <= 2 ? year - 1 : year;
  const era = Math.floor(shifted / 400);
  const yearOfEra = shifted - era * 400;
  const dayOfYear = Math.floor((153 * (month > 2 ? month - 3 : month + 9) + 2) / 5);
  const dayOfEra = yearOfEra * 365 + Math.floor(yearOfEra / 4) - Math.floor(yearOfEra / 100) + dayOfYear;
  return era * 146_097 + dayOfEra - 719_468;
}

/** The decimal number of `count` digits at `start`; negative when one is not a digit. */
function digits(text: string, start: number, count: number): number {
  let value = 0;
  for (let i = start; i < start + count; i++) {
    const digit = text.charCodeAt(i) - 48;
    if (digit < 0 || digit > 9) return -1e9;
    value = value * 10 + digit;
  }
  return value;
}

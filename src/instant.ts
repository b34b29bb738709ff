// Instants as the list filters take them: RFC 3339 `date-time`, what JSON Schema's `date-time`
// format means: a full date, `T`, a time with seconds and a zone (`Z` or `±hh:mm`), either
// letter in either case. Date.parse alone is too lenient: it takes "2025-02-30" and local times.
const INSTANT =
  /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(?:\.(\d+))?([Zz]|[+-]\d{2}:\d{2})$/;

/**
 * An instant as whole epoch milliseconds plus whether it lies strictly inside that
 * millisecond. A double cannot hold both (1.7e12 ms with a 1e-4 fraction needs 17 digits),
 * and exclusive bounds against whole-millisecond timestamps need nothing more.
 */
export interface Instant {
  millis: number;
  /** True when digits past the millisecond are not all zero. */
  insideMillis: boolean;
}

/** Exclusive lower bound in whole milliseconds: t > instant exactly when t > bound. */
export function afterBound({ millis }: Instant): number {
  return millis;
}

/** Exclusive upper bound in whole milliseconds: t < instant exactly when t < bound. */
export function beforeBound({ millis, insideMillis }: Instant): number {
  return insideMillis ? millis + 1 : millis;
}

/**
 * An RFC 3339 instant, or undefined if the text is not one. A leap second (`23:59:60` in UTC,
 * RFC 3339 section 5.7) has no epoch millisecond of its own: it lies after 23:59:59.999 and
 * before the next midnight, which is what it is as a bound.
 */
export function parseInstant(text: string): Instant | undefined {
  const match = INSTANT.exec(text);
  if (!match) return undefined;
  const [, y, mo, d, h, mi, s, fraction = "", zone] = match;
  const year = Number(y), month = Number(mo), day = Number(d);
  const hour = Number(h), minute = Number(mi), second = Number(s);
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month)) return undefined;
  if (hour > 23 || minute > 59 || second > 60) return undefined;
  let offsetMinutes = 0;
  if (zone !== "Z" && zone !== "z") {
    const sign = zone!.startsWith("-") ? -1 : 1;
    const [oh, om] = zone!.slice(1).split(":").map(Number);
    if (oh! > 23 || om! > 59) return undefined;
    offsetMinutes = sign * (oh! * 60 + om!);
  }
  const utcMinuteOfDay = (((hour * 60 + minute - offsetMinutes) % 1440) + 1440) % 1440;
  if (second === 60 && utcMinuteOfDay !== 1439) return undefined;
  // Date.UTC would read years 0-99 as 1900-1999; setUTCFullYear takes them as written.
  const minuteStart = new Date(0).setUTCFullYear(year, month - 1, day) + (hour * 60 + minute - offsetMinutes) * 60_000;
  if (second === 60) {
    const millis = minuteStart + 59_999;
    return Number.isFinite(millis) ? { millis, insideMillis: true } : undefined;
  }
  const millis = minuteStart + second * 1000 + Number(fraction.slice(0, 3).padEnd(3, "0"));
  return Number.isFinite(millis) ? { millis, insideMillis: /[1-9]/.test(fraction.slice(3)) } : undefined;
}

function daysInMonth(year: number, month: number): number {
  const leap = (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
  return month === 2 ? (leap ? 29 : 28) : [4, 6, 9, 11].includes(month) ? 30 : 31;
}

/**
 * `new Date(millis).toISOString()`, for years 0 to 9999, without a Date per call: exports write
 * one per row, in time order, so the date part is kept from one call to the next.
 */
export function formatInstant(millis: number): string {
  const days = Math.floor(millis / 86_400_000);
  if (days !== lastDay) {
    lastDate = formatDate(days);
    lastDay = days;
  }
  let rest = millis - days * 86_400_000;
  const hour = Math.floor(rest / 3_600_000);
  rest -= hour * 3_600_000;
  const minute = Math.floor(rest / 60_000);
  rest -= minute * 60_000;
  const second = Math.floor(rest / 1000);
  const milli = rest - second * 1000;
  return `${lastDate}T${pad(hour, 2)}:${pad(minute, 2)}:${pad(second, 2)}.${pad(milli, 3)}Z`;
}

let lastDay = Number.NaN;
let lastDate = "";

/** `YYYY-MM-DD` of a day since the epoch, by Howard Hinnant's algorithm (`civil_from_days`). */
function formatDate(days: number): string {
  const shifted = days + 719_468;
  const era = Math.floor(shifted / 146_097);
  const dayOfEra = shifted - era * 146_097;
  const yearOfEra = Math.floor((dayOfEra - Math.floor(dayOfEra / 1460) + Math.floor(dayOfEra / 36_524) - Math.floor(dayOfEra / 146_096)) / 365);
  const dayOfYear = dayOfEra - (365 * yearOfEra + Math.floor(yearOfEra / 4) - Math.floor(yearOfEra / 100));
  const monthIndex = Math.floor((5 * dayOfYear + 2) / 153);
  const day = dayOfYear - Math.floor((153 * monthIndex + 2) / 5) + 1;
  const month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9;
  const year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0);
  return `${pad(year, 4)}-${pad(month, 2)}-${pad(day, 2)}`;
}

function pad(n: number, width: number): string {
  const text = String(n);
  return text.length >= width ? text : "000".slice(0, width - text.length) + text;
}

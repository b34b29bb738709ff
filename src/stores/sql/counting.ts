/**
 * What the live statements know of the tables of counts per value and day: which columns are
 * counted (the equality filters) and how a day is numbered. The migrations that made those
 * tables and their triggers keep frozen copies of both (migrations.ts), so that adding a filter
 * here never changes what a released migration runs: its own migration counts the new column.
 */

/**
 * The equality filters: a list filter's field and its column, the column as
 * `submission_value_days.field` names it.
 */
export const EQUALITY_COLUMNS = { popupId: "popup_id", domain: "domain", device: "device", status: "status" } as const;

/** A UTC day in milliseconds: the length of the days `dayOf` numbers (the days of the tables of counts per day). */
export const DAY_MS = 86_400_000;

/**
 * The UTC day of an epoch-milliseconds expression, as a whole number that rounds down before
 * 1970 too (SQLite's integer division rounds toward zero): in JavaScript, `Math.floor(millis / DAY_MS)`.
 * The count triggers number days the same way (migrations.ts).
 */
export function dayOf(millis: string): string {
  return `((${millis} - ((${millis} % ${DAY_MS}) + ${DAY_MS}) % ${DAY_MS}) / ${DAY_MS})`;
}

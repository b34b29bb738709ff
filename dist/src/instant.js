// ISO 8601 instants as the list filters take them: a full date and time with a zone
// (`Z` or `±hh:mm`). Date.parse alone is too lenient: it takes "2025-02-30" and local times.
const INSTANT = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2})(?:\.(\d+))?)?(Z|[+-]\d{2}:\d{2})$/;
/** Exclusive lower bound in whole milliseconds: t > instant exactly when t > bound. */
export function afterBound({ millis }) {
    return millis;
}
/** Exclusive upper bound in whole milliseconds: t < instant exactly when t < bound. */
export function beforeBound({ millis, insideMillis }) {
    return insideMillis ? millis + 1 : millis;
}
/** An ISO 8601 instant with a zone, or undefined if the text is not one. */
export function parseInstant(text) {
    const match = INSTANT.exec(text);
    if (!match)
        return undefined;
    const [, y, mo, d, h, mi, s = "0", fraction = "", zone] = match;
    const year = Number(y), month = Number(mo), day = Number(d);
    const hour = Number(h), minute = Number(mi), second = Number(s);
    if (month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month))
        return undefined;
    if (hour > 23 || minute > 59 || second > 59)
        return undefined;
    let offsetMinutes = 0;
    if (zone !== "Z") {
        const sign = zone.startsWith("-") ? -1 : 1;
        const [oh, om] = zone.slice(1).split(":").map(Number);
        if (oh > 23 || om > 59)
            return undefined;
        offsetMinutes = sign * (oh * 60 + om);
    }
    // Date.UTC would read years 0-99 as 1900-1999; setUTCFullYear takes them as written.
    const utc = new Date(0).setUTCFullYear(year, month - 1, day) + ((hour * 60 + minute - offsetMinutes) * 60 + second) * 1000;
    const millis = utc + Number(fraction.slice(0, 3).padEnd(3, "0"));
    return Number.isFinite(millis) ? { millis, insideMillis: /[1-9]/.test(fraction.slice(3)) } : undefined;
}
function daysInMonth(year, month) {
    const leap = (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
    return month === 2 ? (leap ? 29 : 28) : [4, 6, 9, 11].includes(month) ? 30 : 31;
}

/** Text order for what is sorted in JavaScript but must sort as SQLite sorts it. */

/**
 * Text order by Unicode code point, which is SQLite's (UTF-8 bytes compare in code point
 * order). JavaScript's `<` compares UTF-16 units instead, which puts characters past U+FFFF
 * (surrogate pairs) before U+E000..U+FFFF.
 */
export function compareByCodePoint(a: string, b: string): number {
  const length = Math.min(a.length, b.length);
  for (let i = 0; i < length; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x !== y) return codePointRank(x) - codePointRank(y);
  }
  return a.length - b.length;
}

function codePointRank(unit: number): number {
  if (unit >= 0xd800 && unit <= 0xdfff) return unit + 0x2000; // a surrogate: above every BMP unit
  return unit >= 0xe000 ? unit - 0x800 : unit;
}

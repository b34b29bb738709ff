import { valueTooBig } from "./driver.ts";

/**
 * A page read as one value by `read`, or, when the database refuses that value as too long
 * (`valueTooBig`: D1 past 2 MB), as two pages of half the rows each, the second from where the
 * first ended, joined: the same rows in the same order. A half that is refused too is halved
 * again, down to a single row. The change log's pages and a walk's (events.ts, store.ts) are
 * read this way.
 */
export async function readInHalves<Bounds extends { limit: number }, Page>(
  bounds: Bounds,
  read: (bounds: Bounds) => Promise<Page>,
  halves: {
    /** The rows a page holds: fewer than its limit, and it is the last. */
    rows(page: Page): number;
    /** `bounds` moved past `first`, the page read before. */
    after(bounds: Bounds, first: Page): Bounds;
    join(first: Page, rest: Page): Page;
  },
): Promise<Page> {
  try {
    return await read(bounds);
  } catch (error) {
    if (bounds.limit <= 1 || !valueTooBig(error)) throw error;
  }
  const half = Math.ceil(bounds.limit / 2);
  const first = await readInHalves({ ...bounds, limit: half }, read, halves);
  if (halves.rows(first) < half) return first;
  const rest = await readInHalves(halves.after({ ...bounds, limit: bounds.limit - half }, first), read, halves);
  return halves.join(first, rest);
}

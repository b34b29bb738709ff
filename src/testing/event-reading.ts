/** Reading a change log as the tests need it: the whole of it, or following it while writes go on. */
import type { ChangeEvent } from "../events.ts";
import type { EventLog, EventQuery } from "../store.ts";
import { assert } from "./assert.ts";

/** Every event of the account from the start (or `after`), page by page, with the final cursor. */
export async function readAll(store: EventLog, accountId: string, query: Omit<EventQuery, "after" | "limit"> = {}, limit = 7, after?: number) {
  const events: ChangeEvent[] = [];
  let cursor = after;
  for (let pages = 0; pages < 10_000; pages++) {
    const page = await store.readEvents(accountId, { ...query, limit, after: cursor });
    if (page.expired) throw new Error("the log says the cursor expired");
    assert.ok(page.events.length <= limit, `a page of ${page.events.length} for limit ${limit}`);
    events.push(...page.events);
    assert.ok(cursor === undefined || page.cursor >= cursor, "the cursor went backwards");
    cursor = page.cursor;
    if (page.events.length < limit) return { events, cursor };
  }
  throw new Error("the log never ended");
}

/**
 * Follows the account's log by cursor, `limit` events a page, while `writing()` holds, then to
 * its end: what a sync client sees, in the order it saw it.
 */
export async function followLog(store: EventLog, accountId: string, limit: number, writing: () => boolean): Promise<ChangeEvent[]> {
  const seen: ChangeEvent[] = [];
  let cursor: number | undefined;
  for (;;) {
    const done = !writing();
    const page = await store.readEvents(accountId, { limit, after: cursor });
    if (page.expired) throw new Error("expired while following");
    seen.push(...page.events);
    cursor = page.cursor;
    if (done && page.events.length < limit) return seen;
    // A store may answer without a macrotask in between; writers need the turns too.
    await new Promise((resolve) => setTimeout(resolve, 0));
  }
}

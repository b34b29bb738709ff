/**
 * The SQL store keeps a list's and a walk's statement texts per shape of query (the `shape`
 * that `listStatements` and `walkStatement` return) and builds only their arguments for each
 * query: for queries of every shape, with values that move each choice the texts make (deep or
 * shallow, bounds early or late in their days, a range without a whole millisecond at an end),
 * the kept text must be the one the query's own statement has, and hold a placeholder for each
 * of its arguments.
 */
import { suite } from "uvu";
import * as assert from "uvu/assert";
import type { SubmissionQuery, SubmissionWalk } from "../../src/store.ts";
import type { SqlStatement } from "../../src/stores/sql/driver.ts";
import {
  listStatements, pageWithTotal, rowsWithTotal, statementTexts, walkStatement, wholePage, withChoice,
} from "../../src/stores/sql/list-query.ts";

const texts = suite("SQL store: statement texts kept per shape of query");

const DAY = 86_400_000;
const D0 = Date.UTC(2025, 6, 1);

/** A small deterministic random source, so that a failure can be run again. */
function random(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state * 1_103_515_245 + 12_345) % 2 ** 31;
    return state / 2 ** 31;
  };
}

function randomQuery(next: () => number): SubmissionQuery {
  const pick = <T>(values: readonly T[]): T => values[Math.floor(next() * values.length)]!;
  const time = () => D0 + Math.floor(next() * 10) * DAY + pick([0, 1, -1, 0.5, -0.5, 3_000_000, 50_000_000, 43_200_000, 86_399_999]);
  const after = next() < 0.5 ? time() : undefined;
  const before = next() < 0.5 ? (after !== undefined && next() < 0.3 ? after + pick([0.25, 1, 2, DAY]) : time()) : undefined;
  return {
    ...(next() < 0.5 ? { popupId: pick(["a", "b", "c"]) } : {}),
    ...(next() < 0.5 ? { domain: pick(["example.com", "shop.example.com"]) } : {}),
    ...(next() < 0.5 ? { device: pick(["desktop", "mobile"]) } : {}),
    ...(next() < 0.5 ? { status: pick(["pending", "completed"] as const) } : {}),
    ...(after === undefined ? {} : { createdAfter: after }),
    ...(before === undefined ? {} : { createdBefore: before }),
    order: pick(["asc", "desc"] as const),
    limit: pick([1, 10, 100, 101, 500, 1000]),
    offset: pick([0, 3, 150, 999, 1000, 50_000]),
  };
}

function placeholders(sql: string): number {
  return sql.split("?").length - 1;
}

texts("for thousands of queries of every shape, the kept text is the query's own, with a placeholder per argument", () => {
  const kept = statementTexts(Number.POSITIVE_INFINITY);
  const next = random(18);
  const shapes = new Set<string>();
  const check = (shape: string, part: string, statement: SqlStatement, what: string) => {
    const made = statement.sql;
    const reused = kept(shape, part, statement);
    assert.is(reused.sql, made, `${part} of ${what}`);
    assert.equal(reused.args, statement.args, `${part} of ${what}`);
    assert.is(placeholders(made), statement.args!.length, `placeholders of ${part} of ${what}`);
    shapes.add(`${shape} ${part}`);
  };
  for (let i = 0; i < 6000; i++) {
    const query = randomQuery(next);
    const what = JSON.stringify(query);
    for (const as of ["rows", "json", "json as stored"] as const) {
      const { shape, page, count, merge, choice, walkCount, chosenWalk } = listStatements("account", query, as);
      check(shape, "count", count, what);
      if (merge === undefined) check(shape, "page", page, what);
      else {
        check(shape, "walk", withChoice(choice!(), page), what);
        check(shape, "merge", merge(), what);
        check(shape, "walk with total", pageWithTotal(page, walkCount!, choice!()), what);
        check(shape, "walk rows with total", rowsWithTotal(page, walkCount!, choice!()), what);
        check(shape, "chosen walk with total", pageWithTotal(chosenWalk!(), count), what);
        check(shape, "chosen walk rows with total", rowsWithTotal(chosenWalk!(), count), what);
      }
      if (as !== "rows") check(shape, "with total", pageWithTotal(merge?.() ?? page, count), what);
    }
    const walk: SubmissionWalk = { ...query, ...(next() < 0.5 ? { after: { createdAt: (query.createdAfter ?? D0) + next() * 3 * DAY, submissionId: "id" } } : {}) };
    for (const as of ["rows", "lines", "lines as stored"] as const) {
      const { shape, page } = walkStatement("account", walk, as);
      check(shape, "lines", wholePage(page, "lines"), JSON.stringify(walk));
    }
  }
  // the queries reached many shapes, each more than once
  assert.ok(shapes.size > 500 && shapes.size < 7500, `${shapes.size} shapes`);
});

texts.run();

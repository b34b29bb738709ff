/**
 * The required part of the store contract (`SubmissionStore` in src/store.ts) as tests, and
 * the optional fast paths, which are tested through the store's own method when it has
 * one and through the fallback otherwise: the answers must be the same either way.
 */
import {
  deleteSubmissions, getSubmissionAsJson, listDataKeys, listSubmissionsAsJson, type SubmissionCursor, type SubmissionFilter, type SubmissionQuery, type SubmissionStore, type SubmissionWalk,
  placeOf, walkSubmissionsAsCsvParts, walkSubmissionsAsJson, walkSubmissionsAsNdjson,
} from "../store.ts";
import { csvRecord, csvRecords } from "../export/csv.ts";
import { compareByCodePoint } from "../text-order.ts";
import type { Submission, SubmissionStatus } from "../submission.ts";
import { assert } from "./assert.ts";
import {
  ACCOUNT, awkwardSubmissions, correlatedFilterCombinations, correlatedRows, DEVICES, equalityFilterCombinations, expectedPage, expectList,
  OTHER_ACCOUNT, POPUPS, seedRows, T0,
} from "./fixtures.ts";
import { storeTests, type StoreSuiteOptions } from "./suite.ts";

/** Registers the tests of `SubmissionStore` (fast paths included) with your runner's `test`. */
export function testSubmissionStore<S extends SubmissionStore>(options: StoreSuiteOptions<S>): void {
  const test = storeTests(options);

  async function seeded(store: SubmissionStore): Promise<{ rows: Submission[]; otherRows: Submission[] }> {
    const rows = seedRows();
    // The other account holds look-alikes of every row (same popups, domains, times), so any
    // query that leaks across accounts gets a wrong total.
    const otherRows = seedRows(12);
    for (const row of rows) await store.insertSubmission(ACCOUNT, row);
    for (const row of otherRows) await store.insertSubmission(OTHER_ACCOUNT, row);
    return { rows, otherRows };
  }

  /** Walks every match page by page, each page starting after the last row of the one before. */
  async function walkAll(store: SubmissionStore, accountId: string, walk: Omit<SubmissionWalk, "after">): Promise<string[]> {
    const seen: string[] = [];
    let after: SubmissionCursor | undefined;
    for (let pages = 0; pages < 1000; pages++) {
      const page = await store.walkSubmissions(accountId, { ...walk, after });
      assert.ok(page.length <= walk.limit, `a page of ${page.length} for limit ${walk.limit}`);
      seen.push(...page.map((s) => s.submissionId));
      if (page.length < walk.limit) return seen;
      const last = page.at(-1)!;
      after = { createdAt: Date.parse(last.createdAt), submissionId: last.submissionId };
    }
    throw new Error("the walk never ended");
  }

  const DAY = 24 * 60 * 60_000;
  const record = (key: string, fingerprint = "fp-1", expiresAt = T0 + DAY) => ({ key, fingerprint, expiresAt });

  test("insert then get returns the submission field for field", async (store) => {
    const submission: Submission = {
      submissionId: crypto.randomUUID(),
      popupId: "popup_123",
      data: {
        email: "jane@example.com",
        name: "Jöhn \"Q\" <b>O'Brien</b> 😀",
        consent: true,
        score: 1.25,
        big: 9007199254740991,
        none: null,
        tags: ["a", 1, false, null, { deep: ["x"] }],
        nested: { "dotted.key": { level: 3 } },
      },
      domain: "example.com",
      userAgent: "Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X)",
      device: "mobile",
      status: "pending",
      createdAt: "2025-07-12T10:30:00.123Z",
    };
    await store.insertSubmission(ACCOUNT, submission);
    assert.equal(await store.getSubmission(ACCOUNT, submission.submissionId), submission);
    assert.equal((await store.listSubmissions(ACCOUNT, { order: "desc", limit: 10, offset: 0 })).items, [submission]);
  });

  test("what a store returns is a copy: editing it changes nothing stored", async (store) => {
    const [row] = seedRows(1);
    await store.insertSubmission(ACCOUNT, row!);
    const storedStatus = row!.status;
    row!.status = storedStatus === "pending" ? "completed" : "pending";
    const got = (await store.getSubmission(ACCOUNT, row!.submissionId))!;
    assert.is(got.status, storedStatus);
    got.data.email = "changed";
    (await store.listSubmissions(ACCOUNT, { order: "asc", limit: 1, offset: 0 })).items[0]!.data.index = -1;
    assert.equal((await store.getSubmission(ACCOUNT, row!.submissionId))!.data, { email: "user0@example.com", index: 0 });
  });

  test("get of an unknown id is undefined", async (store) => {
    await seeded(store);
    assert.is(await store.getSubmission(ACCOUNT, crypto.randomUUID()), undefined);
  });

  test("a second insert with an id the account already has fails and changes nothing", async (store) => {
    const [row] = seedRows(1);
    await store.insertSubmission(ACCOUNT, row!);
    let failed = false;
    try {
      await store.insertSubmission(ACCOUNT, { ...row!, popupId: "other", status: "completed" });
    } catch {
      failed = true;
    }
    assert.ok(failed, "duplicate insert must throw");
    assert.equal(await store.getSubmission(ACCOUNT, row!.submissionId), row);
    assert.is((await store.listSubmissions(ACCOUNT, { order: "asc", limit: 10, offset: 0 })).total, 1);
  });

  test("list: both orders are total, by createdAt then submissionId, in the same direction", async (store) => {
    const { rows } = await seeded(store);
    for (const order of ["asc", "desc"] as const) {
      const page = await expectList(store, ACCOUNT, rows, { order, limit: 100, offset: 0 });
      assert.is(page.items.length, rows.length);
      // The reference model decides ties by id; make sure the seed really has ties.
      const times = page.items.map((s) => s.createdAt);
      assert.ok(new Set(times).size < times.length, "seed has createdAt ties");
    }
  });

  test("list: every combination of equality filters, both orders, matches the reference", async (store) => {
    const { rows } = await seeded(store);
    for (const filter of equalityFilterCombinations()) {
      for (const order of ["asc", "desc"] as const) {
        await expectList(store, ACCOUNT, rows, { ...filter, order, limit: 100, offset: 0 });
        await expectList(store, ACCOUNT, rows, { ...filter, order, limit: 2, offset: 1 });
      }
    }
  });

  test("list: a filter value that matches nothing gives no items and total 0", async (store) => {
    const { rows } = await seeded(store);
    for (const filter of [{ popupId: "popup_zzz" }, { domain: "nowhere.test" }, { device: "toaster" }, { popupId: "popup_a", device: "no" }]) {
      const page = await expectList(store, ACCOUNT, rows, { ...filter, order: "desc", limit: 10, offset: 0 });
      assert.is(page.total, 0);
    }
  });

  test("list: total counts every match regardless of limit and offset", async (store) => {
    const { rows } = await seeded(store);
    for (const [limit, offset] of [[1, 0], [5, 3], [10, 30], [100, 0]] as const) {
      const page = await expectList(store, ACCOUNT, rows, { order: "desc", limit, offset });
      assert.is(page.total, rows.length);
    }
  });

  test("list: an offset past the end gives no items and the true total", async (store) => {
    const { rows } = await seeded(store);
    const page = await expectList(store, ACCOUNT, rows, { status: "pending", order: "asc", limit: 10, offset: 1000 });
    assert.equal(page.items, []);
    assert.ok(page.total > 0);
  });

  test("list: paging through with offset visits every row exactly once", async (store) => {
    const { rows } = await seeded(store);
    for (const order of ["asc", "desc"] as const) {
      const seen: string[] = [];
      for (let offset = 0; offset < rows.length; offset += 5) {
        const page = await store.listSubmissions(ACCOUNT, { order, limit: 5, offset });
        seen.push(...page.items.map((s) => s.submissionId));
      }
      assert.is(new Set(seen).size, rows.length);
      assert.equal(seen, expectedPage(rows, { order, limit: 100, offset: 0 }).ids);
    }
  });

  test("list: createdAfter and createdBefore are exclusive, alone, together and with filters", async (store) => {
    const { rows } = await seeded(store);
    const at = (minute: number) => T0 + minute * 60_000;
    const bounds: SubmissionFilter[] = [
      { createdAfter: at(10) },
      { createdBefore: at(10) },
      { createdAfter: at(4), createdBefore: at(16) }, // both ends land on a millisecond shared by two rows
      { createdAfter: at(4) - 0.5, createdBefore: at(4) + 0.5 }, // fractions of a millisecond are honoured
      { createdAfter: at(4) + 0.25, createdBefore: at(5) }, // nothing strictly between
      { createdAfter: at(20), createdBefore: at(10) }, // an empty range
      { createdAfter: at(-100), createdBefore: at(1000) },
    ];
    for (const bound of bounds) {
      for (const filter of [{}, { popupId: "popup_a" }, { status: "pending" as const, device: "desktop" }]) {
        for (const order of ["asc", "desc"] as const) {
          await expectList(store, ACCOUNT, rows, { ...bound, ...filter, order, limit: 100, offset: 0 });
        }
      }
    }
    const onTheTie = await store.listSubmissions(ACCOUNT, { createdAfter: at(4) - 0.5, createdBefore: at(4) + 0.5, order: "asc", limit: 10, offset: 0 });
    assert.is(onTheTie.total, 2, "both rows of the shared millisecond are inside (at-0.5, at+0.5)");
  });

  test("setSubmissionStatus: changes the status, is true, and lists and totals follow", async (store) => {
    const { rows } = await seeded(store);
    const target = rows.find((r) => r.status === "pending")!;
    assert.is(await store.setSubmissionStatus(ACCOUNT, target.submissionId, "completed"), true);
    target.status = "completed";
    assert.is((await store.getSubmission(ACCOUNT, target.submissionId))!.status, "completed");
    for (const status of ["pending", "completed"] as const) {
      await expectList(store, ACCOUNT, rows, { status, order: "desc", limit: 100, offset: 0 });
      await expectList(store, ACCOUNT, rows, { status, popupId: target.popupId, order: "desc", limit: 100, offset: 0 });
    }
    assert.is(await store.setSubmissionStatus(ACCOUNT, target.submissionId, "completed"), true, "setting the current status succeeds");
    assert.is(await store.setSubmissionStatus(ACCOUNT, target.submissionId, "pending"), true, "completed may go back to pending");
    assert.is((await store.getSubmission(ACCOUNT, target.submissionId))!.status, "pending");
  });

  test("setSubmissionStatus: false for an unknown id and for another account's submission", async (store) => {
    const { otherRows } = await seeded(store);
    assert.is(await store.setSubmissionStatus(ACCOUNT, crypto.randomUUID(), "completed"), false);
    const theirs = otherRows.find((r) => r.status === "pending")!;
    assert.is(await store.setSubmissionStatus(ACCOUNT, theirs.submissionId, "completed"), false);
    assert.is((await store.getSubmission(OTHER_ACCOUNT, theirs.submissionId))!.status, "pending");
  });

  test("deleteSubmission: removes for good; a second delete and an unknown id are false", async (store) => {
    const { rows } = await seeded(store);
    const [target] = rows.splice(7, 1);
    assert.is(await store.deleteSubmission(ACCOUNT, target!.submissionId), true);
    assert.is(await store.getSubmission(ACCOUNT, target!.submissionId), undefined);
    assert.is(await store.deleteSubmission(ACCOUNT, target!.submissionId), false);
    assert.is(await store.deleteSubmission(ACCOUNT, crypto.randomUUID()), false);
    await expectList(store, ACCOUNT, rows, { order: "asc", limit: 100, offset: 0 });
    await expectList(store, ACCOUNT, rows, { popupId: target!.popupId, device: target!.device, order: "desc", limit: 100, offset: 0 });
  });

  test("walk: page after page visits every match once, in the list order, for every filter, bound and order", async (store) => {
    const { rows } = await seeded(store);
    const at = (minute: number) => T0 + minute * 60_000;
    const filters: SubmissionFilter[] = [
      ...equalityFilterCombinations(),
      { createdAfter: at(4), createdBefore: at(16) },
      { createdAfter: at(4) - 0.5, status: "pending" },
    ];
    for (const filter of filters) {
      for (const order of ["asc", "desc"] as const) {
        const expected = expectedPage(rows, { ...filter, order, limit: 1000, offset: 0 }).ids;
        // page sizes that end pages inside a shared millisecond, on it, and past everything
        for (const limit of [1, 2, 5, 100]) {
          assert.equal(await walkAll(store, ACCOUNT, { ...filter, order, limit }), expected, `${JSON.stringify(filter)} ${order} by ${limit}`);
        }
      }
    }
  });

  test("list and walk: sparse and empty combinations of correlated filters, with and without date windows, match the reference", async (store) => {
    const rows = correlatedRows();
    await store.importSubmissions(ACCOUNT, rows);
    // the other account's rows would answer every combination that should be empty
    await store.importSubmissions(OTHER_ACCOUNT, correlatedRows().map((row) => ({ ...row, status: "pending", domain: "away.example.com", device: "bot" })));
    const at = (minute: number) => T0 + minute * 60_000;
    const windows: SubmissionFilter[] = [{}, { createdAfter: at(30), createdBefore: at(45) }, { createdAfter: at(40) - 0.5, createdBefore: at(41) + 0.5 }, { createdAfter: at(200) }];
    let empty = 0;
    let few = 0;
    for (const [i, equalities] of correlatedFilterCombinations().entries()) {
      for (const window of windows) {
        const filter = { ...equalities, ...window };
        const order = i % 2 === 0 ? "asc" : "desc";
        const { total } = await expectList(store, ACCOUNT, rows, { ...filter, order, limit: 3, offset: 0 });
        if (total === 0) empty++;
        else if (total <= 3) few++;
        if (total > 3) await expectList(store, ACCOUNT, rows, { ...filter, order, limit: 3, offset: total - 2 });
        // deeper than any list page: past the end, with the true total
        await expectList(store, ACCOUNT, rows, { ...filter, order, limit: 3, offset: 250 });
        if (window === windows[0] || window === windows[1]) {
          const expected = expectedPage(rows, { ...filter, order, limit: 1000, offset: 0 }).ids;
          assert.equal(await walkAll(store, ACCOUNT, { ...filter, order, limit: 4 }), expected, `walk of ${JSON.stringify(filter)} ${order}`);
          // an export's page size: a store may read such deep pages another way
          assert.equal(await walkAll(store, ACCOUNT, { ...filter, order, limit: 500 }), expected, `walk by 500 of ${JSON.stringify(filter)} ${order}`);
        }
      }
    }
    assert.ok(empty > 100 && few > 20, `the data has empty (${empty}) and few-match (${few}) combinations`);
  });

  test("list and walk: two filters whose matches cluster in time (a popup's older leads all completed) page right in both orders", async (store) => {
    // the counts alone say a match in every eighth row of the popup; oldest first, the first
    // match comes after 350 rows that are not
    const rows = Array.from({ length: 400 }, (_, i): Submission => ({
      ...seedRows(1)[0]!,
      submissionId: crypto.randomUUID(),
      popupId: "popup_a",
      domain: i % 2 === 0 ? "example.com" : "shop.example.com",
      device: DEVICES[Math.floor(i / 2) % 4]!,
      status: i < 350 ? "completed" : "pending",
      createdAt: new Date(T0 + i * 1000).toISOString(),
    }));
    await store.importSubmissions(ACCOUNT, [...rows, ...seedRows(30).map((row) => ({ ...row, popupId: "popup_b" }))]);
    for (const status of ["pending", "completed"] as const) {
      for (const order of ["asc", "desc"] as const) {
        const filter = { popupId: "popup_a", status };
        for (const offset of [0, 5, 45, 190]) await expectList(store, ACCOUNT, rows, { ...filter, order, limit: 10, offset });
        assert.equal(await walkAll(store, ACCOUNT, { ...filter, order, limit: 10 }), expectedPage(rows, { ...filter, order, limit: 1000, offset: 0 }).ids);
      }
    }
  });

  test("list: date ranges over many days (whole days inside, parts of days at the ends) total exactly, through status changes and deletes", async (store) => {
    const DAY = 86_400_000;
    const D0 = Date.UTC(2025, 6, 1);
    // around midnights (exactly, a millisecond either side) and inside days, over 12 days; and
    // around the first midnight of 1970, where days before it count down
    const times = [
      ...Array.from({ length: 12 }, (_, day) => [D0 + day * DAY, D0 + day * DAY - 1, D0 + day * DAY + 1, D0 + day * DAY + 37_000_000]).flat(),
      -1, 0, 1, -DAY, -DAY - 1,
      // more rows at one instant, a midnight, than a store may read one by one at a range's end
      ...Array.from({ length: 40 }, () => D0),
    ];
    const rows = times.map((time, i): Submission => ({
      ...seedRows(1)[0]!,
      submissionId: crypto.randomUUID(),
      popupId: POPUPS[i % 3]!,
      device: DEVICES[i % 4]!,
      status: i % 3 === 0 ? "completed" : "pending",
      createdAt: new Date(time).toISOString(),
    }));
    await store.importSubmissions(ACCOUNT, rows);
    const windows: SubmissionFilter[] = [
      { createdAfter: D0, createdBefore: D0 + 5 * DAY },
      { createdAfter: D0 - 1, createdBefore: D0 + 5 * DAY + 1 },
      { createdAfter: D0 + 0.5, createdBefore: D0 + 9 * DAY - 0.5 },
      { createdAfter: D0 + 2 * DAY - 1, createdBefore: D0 + 3 * DAY },
      { createdAfter: D0 + 2 * DAY + 1 },
      { createdBefore: D0 + 7 * DAY },
      { createdAfter: -DAY - 1, createdBefore: 1 },
      { createdAfter: -2 * DAY, createdBefore: DAY },
      { createdAfter: -0.5 },
      { createdAfter: D0 + 20 * DAY },
      // bounds early and late in their days, where a store may count either side of them
      { createdAfter: D0 + 2 * DAY + 40_000_000, createdBefore: D0 + 6 * DAY + 50_000_000 },
      { createdAfter: D0 + 3 * DAY + 50_000_000, createdBefore: D0 + 8 * DAY + 30_000_000 },
      { createdAfter: D0 + DAY - 2, createdBefore: D0 + 10 * DAY - 1 },
    ];
    const check = async () => {
      for (const window of windows) {
        for (const filter of [{}, { status: "pending" as const }, { popupId: POPUPS[1]!, device: DEVICES[1]! }]) {
          for (const order of ["asc", "desc"] as const) await expectList(store, ACCOUNT, rows, { ...window, ...filter, order, limit: 5, offset: 0 });
        }
      }
    };
    await check();
    for (const row of rows.filter((_, i) => i % 5 === 0)) {
      assert.ok(await store.setSubmissionStatus(ACCOUNT, row.submissionId, row.status === "pending" ? "completed" : "pending"));
      row.status = row.status === "pending" ? "completed" : "pending";
    }
    const deleted = rows.filter((_, i) => i % 7 === 3);
    for (const row of deleted) assert.ok(await store.deleteSubmission(ACCOUNT, row.submissionId));
    rows.splice(0, rows.length, ...rows.filter((row) => !deleted.includes(row)));
    await check();
  });

  test("list and walk: many kinds of query in a row, each asked again with other values, match the reference", async (store) => {
    // A store may keep what it made for one kind of query (which filters, bounds, order, how
    // deep) and reuse it for the next query of that kind with other values: every answer of
    // the second round must be its own, not the first round's.
    const DAY = 86_400_000;
    const D0 = Date.UTC(2025, 6, 1);
    const rows = Array.from({ length: 96 }, (_, i): Submission => ({
      ...seedRows(1)[0]!,
      submissionId: crypto.randomUUID(),
      popupId: POPUPS[i % 3]!,
      domain: Math.floor(i / 3) % 2 === 0 ? "example.com" : "shop.example.com",
      device: DEVICES[Math.floor(i / 2) % 4]!,
      status: i % 5 < 2 ? "completed" : "pending",
      // twelve a day over eight days, two at each midnight
      createdAt: new Date(D0 + Math.floor(i / 12) * DAY + (i % 12 < 2 ? 0 : (i % 12) * 7_000_000)).toISOString(),
    }));
    await store.importSubmissions(ACCOUNT, rows);
    await store.importSubmissions(OTHER_ACCOUNT, seedRows(12));
    const windows = (round: number): SubmissionFilter[] => [
      {},
      { createdAfter: D0 + (1 + round) * DAY + (round === 0 ? 3_000_000 : 60_000_000) },
      { createdBefore: D0 + (6 - round) * DAY + (round === 0 ? -1 : 50_000_000) },
      { createdAfter: D0 + round * DAY - 1, createdBefore: D0 + (5 + round) * DAY + 20_000_000 },
    ];
    const pages = [{ limit: 5, offset: 0 }, { limit: 3, offset: 4 }, { limit: 100, offset: 0 }, { limit: 10, offset: 1500 }];
    for (let round = 0; round < 2; round++) {
      let i = 0;
      for (let mask = 0; mask < 16; mask++) {
        for (const window of windows(round)) {
          for (const order of ["asc", "desc"] as const) {
            const v = i + round;
            const filter: SubmissionFilter = {
              ...(mask & 1 ? { popupId: POPUPS[v % 3]! } : {}),
              ...(mask & 2 ? { domain: v % 2 === 0 ? "example.com" : "shop.example.com" } : {}),
              ...(mask & 4 ? { device: DEVICES[v % 4]! } : {}),
              ...(mask & 8 ? { status: v % 2 === 0 ? ("pending" as const) : ("completed" as const) } : {}),
              ...window,
            };
            await expectList(store, ACCOUNT, rows, { ...filter, order, ...pages[(i + round) % pages.length]! });
            if (i % 4 === round) {
              const limit = [2, 7][round]!;
              const expected = expectedPage(rows, { ...filter, order, limit: 1000, offset: 0 }).ids;
              assert.equal(await walkAll(store, ACCOUNT, { ...filter, order, limit }), expected, `walk of ${JSON.stringify(filter)} ${order} by ${limit}`);
            }
            i++;
          }
        }
      }
    }
  });

  test("list: deep offsets land exactly across days, on ties of created_at at and around midnights, both orders, with one filter or none, through changes", async (store) => {
    const DAY = 86_400_000;
    const D0 = Date.UTC(2025, 6, 1);
    // 1,500 rows over 6 days: runs of one millisecond at each midnight, its last millisecond
    // before and inside each day, so that pages cross days and split ties
    const times = Array.from({ length: 1500 }, (_, i) => {
      const day = Math.floor(i / 250);
      const at = i % 250;
      return D0 + day * DAY + (at < 60 ? 0 : at < 100 ? DAY - 1 : at < 130 ? 1 : (at % 7) * 3_600_000);
    });
    const rows = times.map((time, i): Submission => ({
      ...seedRows(1)[0]!,
      submissionId: crypto.randomUUID(),
      popupId: POPUPS[i % 3]!,
      status: i % 4 === 0 ? "completed" : "pending",
      createdAt: new Date(time).toISOString(),
    }));
    await store.importSubmissions(ACCOUNT, rows);
    await store.importSubmissions(OTHER_ACCOUNT, seedRows(40));
    const offsets = [0, 59, 60, 249, 250, 251, 999, 1000, 1001, 1030, 1250, 1260, 1495, 1499, 1500, 1600];
    const check = async () => {
      for (const order of ["asc", "desc"] as const) {
        for (const offset of offsets) await expectList(store, ACCOUNT, rows, { order, limit: 7, offset });
        for (const offset of [1000, 1100]) {
          await expectList(store, ACCOUNT, rows, { status: "pending", order, limit: 7, offset });
          await expectList(store, ACCOUNT, rows, { device: rows[0]!.device, order, limit: 7, offset });
          await expectList(store, ACCOUNT, rows, { createdAfter: D0 + DAY - 1, createdBefore: D0 + 5 * DAY + 1, order, limit: 7, offset });
        }
      }
    };
    await check();
    // the counts a store skips days by follow deletes, creates and status changes
    const deleted = rows.filter((_, i) => i % 9 === 0);
    for (const row of deleted.slice(0, 20)) assert.ok(await store.deleteSubmission(ACCOUNT, row.submissionId));
    assert.is((await deleteSubmissions(store, ACCOUNT, deleted.slice(20).map((row) => row.submissionId), "api")).length, deleted.length - 20);
    const added = times.slice(0, 90).map((time, i): Submission => ({ ...rows[i]!, submissionId: crypto.randomUUID(), createdAt: new Date(time + 2 * DAY).toISOString() }));
    for (const row of added) await store.insertSubmission(ACCOUNT, row);
    const flipped = rows.filter((row, i) => i % 9 === 4 && !deleted.includes(row)).map((row): Submission => ({ ...row, status: row.status === "pending" ? "completed" : "pending" }));
    for (const row of flipped) assert.ok(await store.setSubmissionStatus(ACCOUNT, row.submissionId, row.status));
    const flippedById = new Map(flipped.map((row) => [row.submissionId, row]));
    rows.splice(0, rows.length, ...rows.filter((row) => !deleted.includes(row)).map((row) => flippedById.get(row.submissionId) ?? row), ...added);
    await check();
  });

  test("walk: paging by cursor never repeats, and never skips what existed throughout, while rows are created and deleted between pages", async (store) => {
    for (const [run, filter] of ([{}, { status: "pending" }, { popupId: "popup_b", domain: "shop.example.com" }] as SubmissionFilter[]).entries()) {
      for (const order of ["asc", "desc"] as const) {
        const account = `acct-cursor-${run}-${order}`;
        const rows = seedRows(40);
        await store.importSubmissions(account, rows);
        const matches = expectedPage(rows, { ...filter, order, limit: 1000, offset: 0 }).ids;
        // every third match is deleted while the walk goes on, some before and some after it passes them
        const doomed = matches.filter((_, i) => i % 3 === 1);
        const survivors = matches.filter((id) => !doomed.includes(id));
        const seen: string[] = [];
        let after: SubmissionCursor | undefined;
        for (let pages = 0; pages < 100; pages++) {
          const victim = doomed[(pages * 5) % doomed.length]!;
          const newcomer: Submission = { ...seedRows(1)[0]!, ...(filter as Partial<Submission>), submissionId: crypto.randomUUID(), createdAt: new Date(T0 + ((pages * 7) % 40) * 60_000).toISOString() };
          // the page read, a delete and a create at once: the store may order them as it likes
          const [page] = await Promise.all([
            store.walkSubmissions(account, { ...filter, order, limit: 3, after }),
            store.deleteSubmission(account, victim),
            store.insertSubmission(account, newcomer),
          ]);
          seen.push(...page.map((s) => s.submissionId));
          if (page.length < 3) break;
          const last = page.at(-1)!;
          after = { createdAt: Date.parse(last.createdAt), submissionId: last.submissionId };
        }
        const what = `${JSON.stringify(filter)} ${order}`;
        assert.is(new Set(seen).size, seen.length, `no item twice: ${what}`);
        assert.equal(seen.filter((id) => survivors.includes(id)), survivors, `every row that existed throughout, in order: ${what}`);
        const positions = seen.map((id) => matches.indexOf(id)).filter((position) => position >= 0);
        assert.equal(positions, [...positions].sort((a, b) => a - b), `in the list order: ${what}`);
      }
    }
  });

  test("walk: starts strictly after the cursor, which need not be a stored row, and never crosses accounts", async (store) => {
    const { rows, otherRows } = await seeded(store);
    const asc = expectedPage(rows, { order: "asc", limit: 1000, offset: 0 }).ids;
    const byId = new Map(rows.map((row) => [row.submissionId, row]));
    // after a row that shares its millisecond with the next one: the tie is decided by id
    const tied = asc.findIndex((id, i) => i + 1 < asc.length && byId.get(id)!.createdAt === byId.get(asc[i + 1]!)!.createdAt);
    assert.ok(tied >= 0, "the seed has a tie");
    const cursor = { createdAt: Date.parse(byId.get(asc[tied]!)!.createdAt), submissionId: asc[tied]! };
    assert.equal((await store.walkSubmissions(ACCOUNT, { order: "asc", limit: 3, after: cursor })).map((s) => s.submissionId), asc.slice(tied + 1, tied + 4));
    const desc = [...asc].reverse();
    const back = desc.indexOf(asc[tied + 1]!);
    const descCursor = { createdAt: cursor.createdAt, submissionId: asc[tied + 1]! };
    assert.equal((await store.walkSubmissions(ACCOUNT, { order: "desc", limit: 2, after: descCursor })).map((s) => s.submissionId), desc.slice(back + 1, back + 3));
    // a cursor between rows: an id no row has, at a time no row has
    const between = { createdAt: T0 + 10 * 60_000 + 30_000, submissionId: "00000000-0000-0000-0000-000000000000" };
    const expected = rows.filter((row) => Date.parse(row.createdAt) > between.createdAt);
    assert.equal((await store.walkSubmissions(ACCOUNT, { order: "asc", limit: 100, after: between })).map((s) => s.submissionId), expectedPage(expected, { order: "asc", limit: 100, offset: 0 }).ids);
    assert.equal(await walkAll(store, OTHER_ACCOUNT, { order: "desc", limit: 4 }), expectedPage(otherRows, { order: "desc", limit: 100, offset: 0 }).ids);
    const first = (await store.walkSubmissions(ACCOUNT, { order: "asc", limit: 1 }))[0]!;
    assert.equal(first, byId.get(asc[0]!), "walked rows are whole submissions");
    assert.equal(await store.walkSubmissions("acct-with-nothing", { order: "asc", limit: 10 }), []);
  });

  test("importSubmissions: inserts what is new, exactly as given, and counts it; again it changes nothing", async (store) => {
    const { rows } = await seeded(store);
    const incoming = seedRows(30).map((row, i) => ({
      ...row,
      status: (i % 2 === 0 ? "completed" : "pending") as SubmissionStatus,
      data: { ...row.data, text: "Jöhn \"Q\" 😀 ,;\n", list: [1, { deep: null }], big: 9007199254740991, frac: 0.1 },
      createdAt: new Date(T0 - 1000 * 60_000 + i * 7).toISOString(),
    }));
    assert.is(await store.importSubmissions(ACCOUNT, incoming), 30);
    for (const row of incoming) assert.equal(await store.getSubmission(ACCOUNT, row.submissionId), row);
    await expectList(store, ACCOUNT, [...rows, ...incoming], { order: "asc", limit: 100, offset: 0 });

    // again, with some rows changed: ids already there are kept as they are
    const changed = incoming.map((row) => ({ ...row, popupId: "changed" }));
    assert.is(await store.importSubmissions(ACCOUNT, changed), 0);
    for (const row of incoming) assert.equal(await store.getSubmission(ACCOUNT, row.submissionId), row);
    // a mix of old and new; a repeated id in one call: the first wins
    const fresh = seedRows(2);
    assert.is(await store.importSubmissions(ACCOUNT, [rows[0]!, fresh[0]!, { ...fresh[0]!, popupId: "second" }, fresh[1]!]), 2);
    assert.equal(await store.getSubmission(ACCOUNT, fresh[0]!.submissionId), fresh[0]);
    assert.is(await store.importSubmissions(ACCOUNT, []), 0);
    assert.is((await store.listSubmissions(ACCOUNT, { order: "asc", limit: 1, offset: 0 })).total, rows.length + 32);
  });

  test("importSubmissions: ids are per account; another account's rows are untouched", async (store) => {
    const { otherRows } = await seeded(store);
    const copies = otherRows.map((row) => ({ ...row, popupId: "imported" }));
    assert.is(await store.importSubmissions(ACCOUNT, copies), copies.length);
    for (const row of otherRows) {
      assert.equal(await store.getSubmission(OTHER_ACCOUNT, row.submissionId), row);
      assert.is((await store.getSubmission(ACCOUNT, row.submissionId))!.popupId, "imported");
    }
  });

  test("accounts are isolated: get, list, status and delete never cross", async (store) => {
    const { rows, otherRows } = await seeded(store);
    const theirs = otherRows[0]!;
    assert.is(await store.getSubmission(ACCOUNT, theirs.submissionId), undefined);
    assert.is(await store.deleteSubmission(ACCOUNT, theirs.submissionId), false);
    assert.equal(await store.getSubmission(OTHER_ACCOUNT, theirs.submissionId), theirs);
    for (const filter of equalityFilterCombinations()) {
      await expectList(store, ACCOUNT, rows, { ...filter, order: "desc", limit: 100, offset: 0 });
      await expectList(store, OTHER_ACCOUNT, otherRows, { ...filter, order: "asc", limit: 100, offset: 0 });
    }
    const empty = await store.listSubmissions("acct-with-nothing", { order: "desc", limit: 10, offset: 0 });
    assert.equal(empty, { items: [], total: 0 });
  });

  test("concurrent inserts, status changes and deletes all take effect; lists and totals agree", async (store) => {
    const { rows } = await seeded(store);
    const fresh = Array.from({ length: 120 }, (_, i): Submission => ({
      ...seedRows(1)[0]!,
      submissionId: crypto.randomUUID(),
      popupId: POPUPS[i % 3]!,
      device: DEVICES[i % 4]!,
      createdAt: new Date(T0 + (40 + (i % 7)) * 60_000).toISOString(),
    }));
    const toComplete = rows.filter((r) => r.status === "pending").slice(0, 8);
    const toDelete = rows.filter((r) => !toComplete.includes(r)).slice(0, 6);
    const work: Promise<unknown>[] = [
      ...fresh.map((row) => store.insertSubmission(ACCOUNT, row)),
      ...toComplete.map((row) => store.setSubmissionStatus(ACCOUNT, row.submissionId, "completed")),
      ...toDelete.map((row) => store.deleteSubmission(ACCOUNT, row.submissionId)),
      ...Array.from({ length: 10 }, () => store.listSubmissions(ACCOUNT, { status: "pending", order: "desc", limit: 5, offset: 0 })),
      ...fresh.slice(0, 20).map((row) => store.insertSubmission(OTHER_ACCOUNT, { ...row, submissionId: crypto.randomUUID() })),
    ];
    const outcomes = await Promise.all(work);
    assert.ok(outcomes.slice(fresh.length, fresh.length + toComplete.length + toDelete.length).every((ok) => ok === true));

    for (const row of toComplete) row.status = "completed";
    const expected = [...rows.filter((r) => !toDelete.includes(r)), ...fresh];
    for (const filter of equalityFilterCombinations()) {
      await expectList(store, ACCOUNT, expected, { ...filter, order: "desc", limit: 100, offset: 0 });
    }
    assert.is((await store.listSubmissions(ACCOUNT, { order: "asc", limit: 1, offset: 0 })).total, expected.length);
  });

  test("totals stay exact through every write that does not change a row: repeats, races, no-ops", async (store) => {
    const { rows } = await seeded(store);
    // (not among the first 10, which are imported again below)
    const [target, other, third] = rows.slice(10).filter((r) => r.status === "pending");
    const fresh = seedRows(6).map((row) => ({ ...row, submissionId: crypto.randomUUID() }));
    const outcomes = await Promise.all([
      // the same row toggled many times at once: it ends up one status, counted once
      ...Array.from({ length: 9 }, (_, i) => store.setSubmissionStatus(ACCOUNT, target!.submissionId, i % 2 ? "pending" : "completed")),
      // set to the status it already has
      store.setSubmissionStatus(ACCOUNT, other!.submissionId, "pending"),
      // deleted twice at once, and changed while it is deleted
      store.deleteSubmission(ACCOUNT, third!.submissionId),
      store.deleteSubmission(ACCOUNT, third!.submissionId),
      store.setSubmissionStatus(ACCOUNT, third!.submissionId, "completed"),
      // rows it has already, imported again (with a changed status, which must not count)
      store.importSubmissions(ACCOUNT, rows.slice(0, 10).map((row) => ({ ...row, status: "completed" }))),
      // one new row imported twice in one call and in two calls at once
      store.importSubmissions(ACCOUNT, [fresh[0]!, fresh[0]!, fresh[1]!]),
      store.importSubmissions(ACCOUNT, [fresh[1]!, fresh[2]!]),
      // a retried idempotent create stores one row
      store.insertSubmissionOnce(ACCOUNT, fresh[3]!, { key: "k", fingerprint: "f", expiresAt: T0 + 60_000 }, T0),
      store.insertSubmissionOnce(ACCOUNT, fresh[4]!, { key: "k", fingerprint: "f", expiresAt: T0 + 60_000 }, T0),
      // a duplicate id refused
      store.insertSubmission(ACCOUNT, rows[5]!).then(() => "stored", () => "refused"),
      store.deleteSubmission(ACCOUNT, "no-such-id"),
    ]);
    assert.is(outcomes.filter((o) => o === "refused").length, 1, "a second insert of an id is refused");
    const deletes = outcomes.slice(10, 12);
    assert.equal(deletes.filter((d) => d === true).length, 1, "one of two racing deletes deletes");
    const stored = await Promise.all([...rows, ...fresh].map((row) => store.getSubmission(ACCOUNT, row.submissionId)));
    const expected = stored.filter((row): row is Submission => row !== undefined);
    assert.is(expected.length, rows.length - 1 + 4, "three fresh rows imported, one created once");
    assert.ok(!expected.some((row) => row.submissionId === third!.submissionId));
    for (const filter of equalityFilterCombinations()) {
      await expectList(store, ACCOUNT, expected, { ...filter, order: "asc", limit: 1, offset: 0 });
      await expectList(store, ACCOUNT, expected, { ...filter, createdAfter: T0 + 10 * 60_000, order: "desc", limit: 1, offset: 0 });
    }
    // and after the last row of a filter value goes, its total is 0, not a stale count
    for (const row of expected.filter((r) => r.popupId === "popup_c")) await store.deleteSubmission(ACCOUNT, row.submissionId);
    assert.equal(await store.listSubmissions(ACCOUNT, { popupId: "popup_c", order: "asc", limit: 5, offset: 0 }), { items: [], total: 0 });
  });

  test("insertSubmissionOnce: the first call stores; a second with the key stores nothing and returns the first", async (store) => {
    const [first, second] = seedRows(2);
    assert.equal(await store.insertSubmissionOnce(ACCOUNT, first!, record("key-1"), T0), { inserted: true });
    assert.equal(await store.getSubmission(ACCOUNT, first!.submissionId), first);
    const retry = await store.insertSubmissionOnce(ACCOUNT, second!, record("key-1", "fp-2"), T0 + 1000);
    assert.equal(retry, { inserted: false, fingerprint: "fp-1", submission: first });
    assert.is(await store.getSubmission(ACCOUNT, second!.submissionId), undefined);
    assert.is((await store.listSubmissions(ACCOUNT, { order: "asc", limit: 10, offset: 0 })).total, 1);
    // the first answer is what was stored then, not what the submission became
    await store.setSubmissionStatus(ACCOUNT, first!.submissionId, first!.status === "pending" ? "completed" : "pending");
    const later = await store.insertSubmissionOnce(ACCOUNT, second!, record("key-1"), T0 + 2000);
    assert.equal(later, { inserted: false, fingerprint: "fp-1", submission: first });
  });

  test("insertSubmissionOnce: keys are per account, and other keys are independent", async (store) => {
    const [a, b, c] = seedRows(3);
    assert.equal(await store.insertSubmissionOnce(ACCOUNT, a!, record("shared"), T0), { inserted: true });
    assert.equal(await store.insertSubmissionOnce(OTHER_ACCOUNT, b!, record("shared"), T0), { inserted: true });
    assert.equal(await store.insertSubmissionOnce(ACCOUNT, c!, record("another"), T0), { inserted: true });
    assert.equal(await store.getSubmission(OTHER_ACCOUNT, b!.submissionId), b);
    assert.is((await store.listSubmissions(ACCOUNT, { order: "asc", limit: 10, offset: 0 })).total, 2);
  });

  test("insertSubmissionOnce: a key is forgotten once it expires", async (store) => {
    const [first, second, third] = seedRows(3);
    await store.insertSubmissionOnce(ACCOUNT, first!, record("key-1", "fp-1", T0 + DAY), T0);
    const justBefore = await store.insertSubmissionOnce(ACCOUNT, second!, record("key-1", "fp-2", T0 + 2 * DAY), T0 + DAY - 1);
    assert.is(justBefore.inserted, false);
    assert.equal(await store.insertSubmissionOnce(ACCOUNT, second!, record("key-1", "fp-2", T0 + 2 * DAY), T0 + DAY), { inserted: true });
    const retry = await store.insertSubmissionOnce(ACCOUNT, third!, record("key-1", "fp-3", T0 + 3 * DAY), T0 + DAY + 1);
    assert.equal(retry, { inserted: false, fingerprint: "fp-2", submission: second });
    assert.is((await store.listSubmissions(ACCOUNT, { order: "asc", limit: 10, offset: 0 })).total, 2);
  });

  test("insertSubmissionOnce: concurrent calls with one key store exactly one submission", async (store) => {
    const rows = seedRows(12);
    const outcomes = await Promise.all(rows.map((row, i) => store.insertSubmissionOnce(ACCOUNT, row, record("racing", `fp-${i}`), T0)));
    const winners = outcomes.flatMap((outcome, i) => (outcome.inserted ? [rows[i]!] : []));
    assert.is(winners.length, 1);
    for (const outcome of outcomes) {
      if (!outcome.inserted) assert.equal(outcome.submission, winners[0]);
    }
    const page = await store.listSubmissions(ACCOUNT, { order: "asc", limit: 100, offset: 0 });
    assert.equal(page.items, winners);
  });

  test("insertSubmissionOnce: deleting the submission forgets its key; what comes back is a copy", async (store) => {
    const [first, second] = seedRows(2);
    await store.insertSubmissionOnce(ACCOUNT, first!, record("key-1"), T0);
    const replay = await store.insertSubmissionOnce(ACCOUNT, second!, record("key-1"), T0);
    if (replay.inserted) throw new Error("expected a replay");
    replay.submission.data.email = "changed";
    const again = await store.insertSubmissionOnce(ACCOUNT, second!, record("key-1"), T0);
    assert.equal(again.inserted ? undefined : again.submission, first);

    assert.is(await store.deleteSubmission(ACCOUNT, first!.submissionId), true);
    assert.equal(await store.insertSubmissionOnce(ACCOUNT, second!, record("key-1", "fp-2"), T0), { inserted: true });
    assert.equal((await store.listSubmissions(ACCOUNT, { order: "asc", limit: 10, offset: 0 })).items, [second]);
  });

  test("walkSubmissionsAsJson (or its fallback): the same pages, each submission exactly as JSON.stringify writes it", async (store) => {
    const awkward = awkwardSubmissions();
    // the ends of the years a createdAt may have, both sides of 1970, of a leap day and of a century
    const times = [
      "1969-12-31T23:59:59.999Z", "0001-01-01T00:00:00.000Z", "9999-12-31T23:59:59.999Z", "2025-07-12T10:30:00.001Z", "2025-07-12T10:30:00.999Z",
      "0000-01-01T00:00:00.000Z", "0000-02-29T23:59:59.999Z", "1969-01-01T00:00:00.000Z", "1900-03-01T00:00:00.000Z", "2000-02-29T12:00:00.000Z",
      "2100-02-28T23:59:59.999Z", "1970-01-01T00:00:00.000Z",
    ];
    times.forEach((createdAt, i) => (awkward[i]!.createdAt = createdAt));
    await store.importSubmissions(ACCOUNT, awkward);
    await store.insertSubmission(OTHER_ACCOUNT, seedRows(1)[0]!);
    await everyWalkPage(async (pageWalk, label) => {
      const walk = { ...pageWalk, popupId: undefined };
      const [submissions, lines] = [await store.walkSubmissions(ACCOUNT, walk), await walkSubmissionsAsJson(store, ACCOUNT, walk)];
      assert.equal(lines, submissions.map((submission) => JSON.stringify(submission)), label);
      const last = submissions.at(-1);
      return { rows: submissions.length, last: last && placeOf(last) };
    });
    const all = await walkSubmissionsAsJson(store, ACCOUNT, { order: "asc", limit: 1000, status: "completed" });
    assert.equal(all.map((line) => JSON.parse(line) as Submission), awkward.filter((s) => s.status === "completed").sort((a, b) => Date.parse(a.createdAt) - Date.parse(b.createdAt)));
  });

  test("walkSubmissionsAsNdjson (or its fallback): the lines of walkSubmissionsAsJson as UTF-8, each ending with a line feed, their count and the last one's place", async (store) => {
    const awkward = awkwardSubmissions();
    await store.importSubmissions(ACCOUNT, awkward);
    await store.insertSubmission(OTHER_ACCOUNT, seedRows(1)[0]!);
    await everyWalkPage(async (walk, label) => {
      const [lines, page] = [await walkSubmissionsAsJson(store, ACCOUNT, walk), await walkSubmissionsAsNdjson(store, ACCOUNT, walk)];
      assert.is(new TextDecoder().decode(page.bytes), lines.map((line) => `${line}\n`).join(""), label);
      assert.is(page.rows, lines.length);
      const last = lines.at(-1);
      assert.equal(page.last, last === undefined ? undefined : placeOf(JSON.parse(last) as Submission));
      return { rows: lines.length, last: page.last };
    });
  });

  test("walkSubmissionsAsCsvParts (or its fallback): each row's CSV record as csvRecord writes it from walkSubmissions, their count and the last one's place", async (store) => {
    const awkward = awkwardSubmissions();
    // an id, a popup and a domain with a comma, which a store joining them must not split wrongly
    awkward.push({ ...awkward[0]!, submissionId: "an id, with a comma", popupId: "a,b", domain: "c,d", createdAt: awkward[1]!.createdAt });
    await store.importSubmissions(ACCOUNT, awkward);
    await store.insertSubmission(OTHER_ACCOUNT, seedRows(1)[0]!);
    const dataKeys = [...new Set(awkward.flatMap((s) => Object.keys(s.data)))].sort(compareByCodePoint);
    await everyWalkPage(async (walk, label) => {
      const [submissions, page] = [await store.walkSubmissions(ACCOUNT, walk), await walkSubmissionsAsCsvParts(store, ACCOUNT, walk)];
      assert.is(csvRecords(page.entries, dataKeys), submissions.map((submission) => csvRecord(submission, dataKeys)).join(""), label);
      assert.is(page.rows, submissions.length);
      const last = submissions.at(-1);
      assert.equal(page.last, last && placeOf(last));
      return { rows: submissions.length, last: page.last };
    });
  });

  test("listSubmissionsAsJson (or its fallback): the page listSubmissions gives, each exactly as JSON.stringify writes it, and the last one's place", async (store) => {
    const awkward = awkwardSubmissions();
    const times = ["1969-12-31T23:59:59.999Z", "0001-01-01T00:00:00.000Z", "9999-12-31T23:59:59.999Z", "2025-07-12T10:30:00.001Z", "2025-07-12T10:30:00.999Z"];
    times.forEach((createdAt, i) => (awkward[i]!.createdAt = createdAt));
    await store.importSubmissions(ACCOUNT, awkward);
    await seeded(store);
    const queries: SubmissionQuery[] = [
      ...[0, 3, 40, 1000].map((offset) => ({ order: "asc" as const, limit: 4, offset })),
      { order: "desc", limit: 100, offset: 0 },
      { order: "desc", limit: 3, offset: 2, popupId: "popup_a", status: "pending" },
      { order: "asc", limit: 5, offset: 0, popupId: "popup_zzz" },
      { order: "desc", limit: 5, offset: 1, createdAfter: T0 + 4 * 60_000, createdBefore: T0 + 16 * 60_000 },
    ];
    for (const query of queries) {
      const [page, texts] = [await store.listSubmissions(ACCOUNT, query), await listSubmissionsAsJson(store, ACCOUNT, query)];
      assert.equal(texts.items, page.items.map((submission) => JSON.stringify(submission)), JSON.stringify(query));
      assert.is(texts.total, page.total);
      const last = page.items.at(-1);
      assert.equal(texts.last, last && { createdAt: Date.parse(last.createdAt), submissionId: last.submissionId }, `last of ${JSON.stringify(query)}`);
    }
  });

  test("getSubmissionAsJson (or its fallback): the submission getSubmission gives, exactly as JSON.stringify writes it", async (store) => {
    const awkward = awkwardSubmissions();
    const times = ["1969-12-31T23:59:59.999Z", "0001-01-01T00:00:00.000Z", "9999-12-31T23:59:59.999Z", "2025-07-12T10:30:00.001Z"];
    times.forEach((createdAt, i) => (awkward[i]!.createdAt = createdAt));
    await store.importSubmissions(ACCOUNT, awkward);
    for (const { submissionId } of awkward) {
      const submission = await store.getSubmission(ACCOUNT, submissionId);
      assert.ok(submission, submissionId);
      assert.is(await getSubmissionAsJson(store, ACCOUNT, submissionId), JSON.stringify(submission), submissionId);
      assert.is(await getSubmissionAsJson(store, OTHER_ACCOUNT, submissionId), undefined, `${submissionId} of another account`);
    }
    assert.is(await getSubmissionAsJson(store, ACCOUNT, crypto.randomUUID()), undefined);
  });

  test("listDataKeys (or its fallback): every key the matches have, per popup, sorted by code point, at most limit", async (store) => {
    const base = seedRows(1)[0]!;
    const row = (minute: number, popupId: string, data: Submission["data"]): Submission => ({
      ...base, submissionId: crypto.randomUUID(), popupId, data, createdAt: new Date(T0 + minute * 60_000).toISOString(),
    });
    // "\u{1F600}" is past U+FFFF and "\uE000" is not: by code point the emoji comes last,
    // by UTF-16 unit it would come first
    const rows = [
      row(1, "popup_a", { name: "a", email: "a@x", nested: { inner: 1 } }),
      row(2, "popup_a", { email: "b@x", "\u{1F600}": true, "\uE000": 1 }),
      row(3, "popup_b", { zip: "1", Email: "c@x" }),
      row(4, "popup_b", {}),
    ];
    await store.insertSubmission(ACCOUNT, rows[0]!);
    await store.insertSubmission(ACCOUNT, rows[1]!);
    await store.importSubmissions(ACCOUNT, rows.slice(2)); // every way of adding rows keeps the keys
    await store.insertSubmission(OTHER_ACCOUNT, row(1, "popup_a", { secret: 1 }));
    const once = row(5, "popup_c", { viaIdempotentCreate: 1 });
    const idempotency = { key: "keys-once", fingerprint: "fp", expiresAt: T0 + 86_400_000 };
    assert.equal(await store.insertSubmissionOnce(OTHER_ACCOUNT, once, idempotency, T0), { inserted: true });
    // a retry that inserts nothing adds no keys
    const retried = await store.insertSubmissionOnce(OTHER_ACCOUNT, { ...once, submissionId: crypto.randomUUID(), data: { notStored: 1 } }, idempotency, T0 + 1);
    assert.is(retried.inserted, false);
    const popupA = ["email", "name", "nested", "\uE000", "\u{1F600}"];
    const all = ["Email", "email", "name", "nested", "zip", "\uE000", "\u{1F600}"];
    assert.equal(await listDataKeys(store, ACCOUNT, {}, 100), all);
    assert.equal(await listDataKeys(store, ACCOUNT, { popupId: "popup_a" }, 100), popupA);
    assert.equal(await listDataKeys(store, ACCOUNT, { popupId: "popup_c" }, 100), []);
    assert.equal(await listDataKeys(store, ACCOUNT, {}, 3), ["Email", "email", "name"]);
    assert.equal(await listDataKeys(store, OTHER_ACCOUNT, {}, 100), ["secret", "viaIdempotentCreate"]);
    // other filters may narrow the keys or not, but never below the keys of their matches
    const after2 = await listDataKeys(store, ACCOUNT, { createdAfter: T0 + 2 * 60_000 }, 100);
    for (const key of ["Email", "zip"]) assert.ok(after2.includes(key), `${key} in ${after2}`);
    assert.ok(after2.every((key) => all.includes(key)));
    const pendingA = await listDataKeys(store, ACCOUNT, { popupId: "popup_a", status: base.status }, 100);
    assert.ok(popupA.every((key) => pendingA.includes(key)) && pendingA.every((key) => popupA.includes(key)));
  });

  test("listDataKeys (or its fallback): a key already stored for one popup or account is stored for another that gets it later", async (store) => {
    const base = seedRows(1)[0]!;
    const row = (popupId: string, data: Submission["data"]): Submission => ({ ...base, submissionId: crypto.randomUUID(), popupId, data });
    await store.insertSubmission(ACCOUNT, row("popup_a", { email: "a@x" }));
    await store.insertSubmission(ACCOUNT, row("popup_a", { email: "b@x" }));
    await store.insertSubmission(ACCOUNT, row("popup_b", { email: "c@x" }));
    await store.insertSubmission(OTHER_ACCOUNT, row("popup_a", { email: "d@x" }));
    assert.equal(await listDataKeys(store, ACCOUNT, { popupId: "popup_b" }, 100), ["email"]);
    assert.equal(await listDataKeys(store, OTHER_ACCOUNT, { popupId: "popup_a" }, 100), ["email"]);
  });
}

/**
 * Walks ACCOUNT page after page in both orders, a page of 1, 4 and 100 rows, up to 100 pages
 * each: `checkPage` checks the page of `walk` and says how many rows it held and where the last
 * one is, where the next page starts.
 */
async function everyWalkPage(checkPage: (walk: SubmissionWalk, label: string) => Promise<{ rows: number; last: SubmissionCursor | undefined }>): Promise<void> {
  for (const order of ["asc", "desc"] as const) {
    for (const limit of [1, 4, 100]) {
      let after: SubmissionCursor | undefined;
      for (let pages = 0; pages < 100; pages++) {
        const { rows, last } = await checkPage({ order, limit, after }, `${order} by ${limit}, page ${pages}`);
        if (rows < limit) break;
        after = last;
      }
    }
  }
}

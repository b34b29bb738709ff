/**
 * `GET /api/events` over HTTP, in every runtime: the change log as a client reads it, and a
 * client that keeps a copy in sync by following it.
 */
import { suite } from "uvu";
import * as assert from "uvu/assert";
import type { ChangeEvent } from "../../src/events.ts";
import type { CompleteStore } from "../../src/store.ts";
import type { Submission, SubmissionStatus } from "../../src/submission.ts";
import { expectError, expectJson, expectSubmission, type Fixture, mount, type StartHttpTarget } from "./fixture.ts";

interface EventList {
  items: ChangeEvent[];
  nextCursor: string;
}

export function eventsSuite(target: string, start: StartHttpTarget, createStore: () => Promise<CompleteStore>): void {
  const t = suite(`${target}: events`);
  let f: Fixture;
  t.before(async () => {
    f = await mount(start, createStore);
  });
  t.after(async () => {
    await (f as Fixture | undefined)?.stop();
  });

  const events = async (key: string, query = ""): Promise<EventList> => expectJson(await f.call("GET", `/api/events${query}`, { key }), 200) as EventList;
  const create = async (key: string, body: object = { popupId: "popup_1", data: { email: "a@example.com" } }, headers: Record<string, string> = {}) =>
    expectSubmission(expectJson(await f.call("POST", "/api/submission", { key, json: body, headers }), 201));

  t("events: API and form creates, a status change and a delete, in order; a no-op PATCH and a replayed create add none", async () => {
    const site = await f.site(["shop.example.com"]);
    const first = await create(site.key, undefined, { "idempotency-key": "once" });
    await create(site.key, undefined, { "idempotency-key": "once" });
    const form = await f.call("POST", "/api/submission", {
      body: new URLSearchParams([["_key", site.publishableKey], ["popupId", "popup_2"], ["email", "b@example.com"]]).toString(),
      headers: { "content-type": "application/x-www-form-urlencoded", origin: "https://shop.example.com", accept: "application/json" },
    });
    const second = expectSubmission(expectJson(form, 201));
    expectJson(await f.call("PATCH", `/api/submission/${first.submissionId}`, { key: site.key, json: { status: "completed" } }), 200);
    expectJson(await f.call("PATCH", `/api/submission/${first.submissionId}`, { key: site.key, json: { status: "completed" } }), 200);
    expectJson(await f.call("DELETE", `/api/submission/${second.submissionId}`, { key: site.key }), 200);

    const page = await events(site.key);
    assert.equal(page.items.map((e) => e.type), ["submission.created", "submission.created", "submission.status_changed", "submission.deleted"]);
    assert.equal(page.items[0]!.data, first);
    assert.equal(page.items[1]!.data, { submissionId: second.submissionId, popupId: "popup_2" }, "a deleted submission's created event keeps no personal data");
    assert.equal(page.items[2]!.data, { submissionId: first.submissionId, popupId: "popup_1", status: "completed", previousStatus: "pending" });
    assert.equal(page.items[3]!.data, { submissionId: second.submissionId, popupId: "popup_2", reason: "api" });
    assert.match(page.nextCursor, /^\d+$/);
    assert.equal(await events(site.key, `?after=${page.nextCursor}`), { items: [], nextCursor: page.nextCursor });

    const other = await f.account();
    assert.equal((await events(other.key)).items, [], "another account sees none of them");
  });

  t("events: limit, type and popupId; paging by nextCursor visits each event once", async () => {
    const { key } = await f.account();
    const made: Submission[] = [];
    for (let i = 0; i < 7; i++) made.push(await create(key, { popupId: i % 2 ? "odd" : "even", data: { i } }));
    for (const s of made.slice(0, 3)) expectJson(await f.call("DELETE", `/api/submission/${s.submissionId}`, { key }), 200);
    const all = await events(key, "?limit=1000");
    assert.is(all.items.length, 10);
    const paged: ChangeEvent[] = [];
    let cursor = "";
    for (;;) {
      const page = await events(key, `?limit=3${cursor && `&after=${cursor}`}`);
      paged.push(...page.items);
      cursor = page.nextCursor;
      if (page.items.length < 3) break;
    }
    assert.equal(paged, all.items);
    assert.equal((await events(key, "?type=submission.deleted")).items, all.items.filter((e) => e.type === "submission.deleted"));
    assert.equal(
      (await events(key, "?type=submission.created,submission.deleted&popupId=odd")).items,
      all.items.filter((e) => e.data.popupId === "odd"),
    );
    assert.is((await events(key, "?type=submission.status_changed")).nextCursor, all.nextCursor, "a filtered reader's cursor moves past what it skips");
  });

  t("events: bad queries are 400 naming the parameter; a secret key is needed", async () => {
    const site = await f.site(["shop.example.com"]);
    for (const [query, name] of [["limit=0", "limit"], ["limit=1001", "limit"], ["after=abc", "after"], ["after=-1", "after"], ["type=submission.made", "type"], ["popupId=", "popupId"]]) {
      expectError(await f.call("GET", `/api/events?${query}`, { key: site.key }), 400, new RegExp(name!));
    }
    expectError(await f.call("GET", "/api/events"), 401);
    expectError(await f.call("GET", "/api/events", { key: site.publishableKey }), 403);
  });

  t("events: a cursor older than the events kept is 410, saying to export afresh and start from a new cursor", async () => {
    const { key } = await f.account();
    await create(key);
    const early = (await events(key)).nextCursor;
    await create(key);
    await f.store.pruneEvents(Date.now() + 60_000);
    expectError(await f.call("GET", `/api/events?after=${early}`, { key }), 410, /export[\s\S]*new cursor/i);
    const fresh = await events(key);
    assert.equal(fresh.items, []);
    await create(key);
    assert.is((await events(key, `?after=${fresh.nextCursor}`)).items.length, 1, "a cursor from after the prune reads on");
  });

  t("events: a cursor ahead of the account's log (kept across a restore from an earlier backup) is 410 too, saying why", async () => {
    const { key } = await f.account();
    await create(key);
    const newest = Number((await events(key)).nextCursor);
    expectError(await f.call("GET", `/api/events?after=${newest + 3}`, { key }), 410, /ahead of this account's log[\s\S]*export[\s\S]*new cursor/i);
    assert.equal((await events(key, `?after=${newest}`)).items, [], "the newest cursor reads on");
  });

  t("events: a client following the feed ends with exactly the server's submissions and statuses", async () => {
    const { key } = await f.account();
    const mirror = new Map<string, SubmissionStatus>();
    let cursor = "";
    const follow = async () => {
      for (;;) {
        const page = await events(key, `?limit=7${cursor && `&after=${cursor}`}`);
        for (const event of page.items) {
          if (event.type === "submission.created" && "status" in event.data) mirror.set(event.data.submissionId, event.data.status);
          else if (event.type === "submission.created") mirror.set(event.data.submissionId, "pending");
          else if (event.type === "submission.status_changed") mirror.set(event.data.submissionId, event.data.status);
          else mirror.delete(event.data.submissionId);
        }
        cursor = page.nextCursor;
        if (page.items.length < 7) return;
      }
    };
    let seed = 7;
    const random = (n: number) => (seed = (seed * 1103515245 + 12345) % 2147483648) % n;
    const live: string[] = [];
    for (let round = 0; round < 12; round++) {
      await Promise.all(
        Array.from({ length: 6 }, async () => {
          const action = live.length === 0 ? 0 : random(3);
          if (action === 0) live.push((await create(key, { popupId: `p${random(3)}`, data: { r: round } })).submissionId);
          else if (action === 1) {
            const id = live[random(live.length)]!;
            await f.call("PATCH", `/api/submission/${id}`, { key, json: { status: random(2) ? "completed" : "pending" } });
          } else {
            const id = live.splice(random(live.length), 1)[0]!;
            await f.call("DELETE", `/api/submission/${id}`, { key });
          }
        }),
      );
      if (round % 3 === 1) await follow();
    }
    await follow();
    const server = expectJson(await f.call("GET", "/api/submission?limit=100", { key }), 200) as { items: Submission[] };
    assert.equal(
      [...mirror].sort(([a], [b]) => (a < b ? -1 : 1)),
      server.items.map((s): [string, SubmissionStatus] => [s.submissionId, s.status]).sort(([a], [b]) => (a < b ? -1 : 1)),
    );
    assert.ok(server.items.length > 0);
  });

  t.run();
}

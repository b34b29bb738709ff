/**
 * A status change's body read without arktype (`readStatusUpdate`, src/routes/submissions.ts)
 * against `statusUpdateBody`, which words every 400: what the fast reading takes, the schema
 * must take with the same status, and the two bodies clients send must never need the schema.
 */
import { type } from "arktype";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { readStatusUpdate } from "../../src/routes/submissions.ts";
import { statusUpdateBody } from "../../src/schemas.ts";

const BODIES: unknown[] = [
  {},
  { status: "pending" },
  { status: "completed" },
  { status: "PENDING" },
  { status: "deleted" },
  { status: "" },
  { status: null },
  { status: 1 },
  { status: ["pending"] },
  { status: "completed", note: "x" },
  { note: "x", status: "pending" },
  { Status: "pending" },
  JSON.parse('{"status":"pending","__proto__":{"x":1}}'),
  JSON.parse('{"__proto__":{"status":"pending"}}'),
  Object.assign(Object.create({ inherited: 1 }), { status: "completed" }),
];

test("what the fast reading takes, statusUpdateBody takes with the same status", () => {
  let taken = 0;
  for (const body of BODIES) {
    const fast = readStatusUpdate(body as Record<string, unknown>);
    if (fast === undefined) continue;
    taken++;
    const checked = statusUpdateBody(body);
    assert.not.instance(checked, type.errors, `statusUpdateBody refuses ${JSON.stringify(body)}, which the fast reading took`);
    assert.is(fast, (checked as { status: string }).status);
  }
  assert.is(taken, 2, "the two plain bodies");
});

test("the bodies clients send are read without the schema", () => {
  assert.is(readStatusUpdate({ status: "pending" }), "pending");
  assert.is(readStatusUpdate({ status: "completed" }), "completed");
});

test("a body with anything besides a known status is left to the schema", () => {
  for (const body of [{ status: "completed", note: "x" }, { status: "done" }, { Status: "pending" }, JSON.parse('{"__proto__":{"status":"pending"}}')]) {
    assert.is(readStatusUpdate(body), undefined, JSON.stringify(body));
    assert.instance(statusUpdateBody(body), type.errors, JSON.stringify(body));
  }
});

test.run();

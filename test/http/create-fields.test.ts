/**
 * A create's fields checked without arktype (src/routes/create/fields.ts) against
 * `createSubmissionBody`, which the OpenAPI document describes and which words every 400:
 * whatever the fast check accepts, `createSubmissionBody` must accept and answer as the same
 * fields, and the fast check must accept the bodies the popup and clients send every day.
 */
import { type } from "arktype";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { readCreateFields } from "../../src/routes/create/fields.ts";
import { createSubmissionBody } from "../../src/schemas.ts";

const VALUES: Record<string, unknown[]> = {
  popupId: ["newsletter", "p", "x".repeat(256), "x".repeat(257), "😀".repeat(256), "😀".repeat(257), "", " ", 7, null, ["p1"], { id: "p1" }, undefined],
  data: [{}, { email: "jane@example.com" }, { nested: { deep: [1, "two", null] } }, [], ["email"], null, "email=jane", 3, true, undefined, Object.create(null)],
  domain: ["example.com", "x".repeat(512), "x".repeat(513), "😀".repeat(512), "😀".repeat(513), "", "\ud800", 1, null, undefined],
  device: ["desktop", "mobile", "tablet", "bot", "unknown", "Desktop", "", "phone", 0, null, undefined],
  userAgent: ["Mozilla/5.0", "", "x".repeat(1024), "x".repeat(1025), "😀".repeat(1024), "😀".repeat(1025), 5, null, undefined],
  _gotcha: ["", "filled", 1, null, false, undefined],
  extra: ["x", 1, null, undefined],
  __proto__: [{}],
  constructor: ["x"],
};

/** Defines every key as an own property, `__proto__` included, as JSON.parse does. */
function body(fields: [string, unknown][]): Record<string, unknown> {
  const object: Record<string, unknown> = {};
  for (const [name, value] of fields) Object.defineProperty(object, name, { value, enumerable: true, writable: true, configurable: true });
  return object;
}

const REQUIRED: [string, unknown][] = [["popupId", "newsletter"], ["data", { email: "jane@example.com" }]];

/** Every field's values alone beside valid required ones, then a few hundred mixtures, from a fixed seed. */
function bodies(): unknown[] {
  const all: unknown[] = [undefined, null, "text", 1, [], [REQUIRED], {}, body(REQUIRED), body([REQUIRED[0]!]), body([REQUIRED[1]!])];
  for (const [name, values] of Object.entries(VALUES)) {
    for (const value of values) all.push(body([...REQUIRED.filter(([required]) => required !== name), [name, value]]));
  }
  let seed = 11;
  const random = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
  const names = Object.keys(VALUES);
  for (let i = 0; i < 600; i++) {
    const fields: [string, unknown][] = [];
    for (const name of names) {
      const chance = name === "popupId" || name === "data" ? 0.9 : name === "extra" || name === "__proto__" || name === "constructor" ? 0.05 : 0.4;
      // The first value of each is a valid one: mostly that, so that many mixtures pass.
      const values = VALUES[name]!;
      if (random() < chance) fields.push([name, random() < 0.6 ? values[0] : values[Math.floor(random() * values.length)]]);
    }
    // Keys in any order: the check must not depend on it.
    if (random() < 0.5) fields.reverse();
    all.push(body(fields));
  }
  return all;
}

test("what the fast check accepts, createSubmissionBody accepts as the same fields", () => {
  let accepted = 0;
  for (const fields of bodies()) {
    const fast = readCreateFields(fields);
    if (fast === undefined) continue;
    accepted++;
    const checked = createSubmissionBody(fields);
    assert.not.instance(checked, type.errors, `createSubmissionBody refuses ${JSON.stringify(fields)}, which the fast check took`);
    assert.is(fast, fields, "the fast check answers the fields it was given");
    assert.is(JSON.stringify(fast), JSON.stringify(checked), `answered differently: ${JSON.stringify(fields)}`);
  }
  assert.ok(accepted > 100, `the fast check took only ${accepted} bodies`);
});

test("the fast check takes every body createSubmissionBody accepts among common ones", () => {
  const common: unknown[] = [
    { popupId: "newsletter", data: { email: "jane@example.com" } },
    JSON.parse('{"popupId":"spring-sale","data":{"email":"a@b.example","name":"Ann","consent":true,"tags":["x","y"]},"domain":"shop.example"}'),
    { popupId: "exit-intent", data: {}, device: "mobile", userAgent: "Mozilla/5.0 (iPhone)" },
    { popupId: "p1", data: { email: "jane@example.com" }, _gotcha: "" },
    // A form post's fields, as src/routes/create/body.ts builds them.
    { popupId: "newsletter", data: Object.fromEntries([["email", "jane@example.com"], ["interests", ["a", "b"]]]) },
  ];
  for (const fields of common) {
    assert.not.instance(createSubmissionBody(fields), type.errors, `createSubmissionBody refuses ${JSON.stringify(fields)}`);
    assert.ok(readCreateFields(fields), `not taken: ${JSON.stringify(fields)}`);
  }
});

test.run();

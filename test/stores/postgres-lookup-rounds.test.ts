import { suite } from "uvu";
import * as assert from "uvu/assert";
import { lookupRounds } from "../../src/stores/postgres/lookup-rounds.ts";

const test = suite("PostgreSQL store: key lookups in rounds");

/** A read whose statements the test answers one by one, from the state of the moment it answers. */
function controlledRead(state: Map<string, string>) {
  const sent: { keys: readonly string[]; answer: () => void }[] = [];
  const read = (keys: readonly string[]) =>
    new Promise<ReadonlyMap<string, string>>((resolve) => {
      // The statement's snapshot: what was committed when it started.
      const snapshot = new Map([...state].filter(([key]) => keys.includes(key)));
      sent.push({ keys, answer: () => resolve(snapshot) });
    });
  return { read, sent };
}

const settle = () => new Promise((resolve) => setTimeout(resolve, 0));

test("a lookup asked for while a statement is in flight is answered by a later statement, which sees writes made meanwhile", async () => {
  const state = new Map([["k1", "active"]]);
  const { read, sent } = controlledRead(state);
  const lookup = lookupRounds(read);
  const first = lookup("k1");
  await settle();
  assert.is(sent.length, 1);
  // The key is revoked (by another server) after the first statement started, before the second request arrives.
  state.set("k1", "revoked");
  const second = lookup("k1");
  const third = lookup("k1");
  await settle();
  assert.is(sent.length, 1, "nothing more is sent while a statement is in flight");
  sent[0]!.answer();
  assert.is(await first, "active");
  await settle();
  assert.is(sent.length, 2);
  assert.equal(sent[1]!.keys, ["k1"], "the waiting lookups of one key share the next statement");
  sent[1]!.answer();
  assert.is(await second, "revoked");
  assert.is(await third, "revoked");
});

test("lookups of different keys asked for together share one statement; an unknown key is undefined; a failed statement fails its lookups only", async () => {
  let fail = true;
  const sent: (readonly string[])[] = [];
  const lookup = lookupRounds(async (keys: readonly string[]) => {
    sent.push(keys);
    await settle();
    if (fail) {
      fail = false;
      throw new Error("connection lost");
    }
    return new Map([["a", 1], ["b", 2]]);
  });
  const failed = lookup("a");
  const [a, b, c] = [lookup("a"), lookup("b"), lookup("c")];
  const failure = await failed.then(() => undefined, (error: Error) => error.message);
  assert.is(failure, "connection lost");
  assert.equal([await a, await b, await c], [1, 2, undefined]);
  assert.equal(sent, [["a"], ["a", "b", "c"]]);
  assert.is(await lookup("b"), 2, "a lookup after the rounds settled is sent at once");
});

test.run();

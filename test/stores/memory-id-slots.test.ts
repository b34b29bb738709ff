/**
 * The memory store's id index (id-slots.ts) against a Map: thousands of ids added and removed
 * in random order, slots reused, the table grown while entries sit in wrapped runs. Every id
 * ever added must be found exactly while it is indexed and never after it is removed, which is
 * what getSubmission, status changes, deletes and imports' duplicate checks rely on.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { seededRandom } from "../../bench/support/dataset.ts";
import { IdSlots } from "../../src/stores/memory/id-slots.ts";

test("ids are found while indexed and not after removal, through growth, slot reuse and wrapped probe runs", () => {
  const random = seededRandom(18);
  const ids: string[] = [];
  const index = new IdSlots(ids);
  const model = new Map<string, number>();
  const free: number[] = [];
  const everAdded: string[] = [];
  let next = 0;
  for (let step = 0; step < 40_000; step++) {
    if (model.size > 0 && random() < 0.45) {
      const victim = everAdded[Math.floor(random() * everAdded.length)]!;
      const slot = model.get(victim);
      if (slot === undefined) continue;
      index.remove(slot);
      model.delete(victim);
      ids[slot] = "";
      free.push(slot);
    } else {
      // short ids collide in the table often; some share a prefix, as time-ordered ids do
      const id = random() < 0.5 ? `s${next++}` : `01941f29-${(next++).toString(16)}`;
      const slot = free.pop() ?? model.size;
      ids[slot] = id;
      index.add(slot);
      model.set(id, slot);
      everAdded.push(id);
    }
    if (step % 997 === 0) {
      assert.is(index.size, model.size);
      for (const id of everAdded) assert.is(index.get(id), model.get(id), id);
      assert.is(index.get("never-added"), undefined);
    }
  }
  for (const id of everAdded) assert.is(index.get(id), model.get(id), id);
});

test.run();

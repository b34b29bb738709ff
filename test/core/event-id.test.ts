import { test } from "uvu";
import * as assert from "uvu/assert";
import { newEventId } from "../../src/events.ts";

test("event ids are evt_ and 32 hex digits, the first 12 their time", () => {
  const now = Date.UTC(2026, 10, 26, 23, 0);
  const id = newEventId(now);
  assert.match(id, /^evt_[0-9a-f]{32}$/);
  assert.is(parseInt(id.slice(4, 16), 16), now);
});

test("ids made in one millisecond differ; ids made later sort after", () => {
  const now = Date.UTC(2026, 10, 26, 23, 0);
  const same = Array.from({ length: 1000 }, () => newEventId(now));
  assert.is(new Set(same).size, same.length);
  const later = Array.from({ length: 1000 }, (_, i) => newEventId(now + 1 + i));
  assert.equal([...later].sort(), later);
  assert.ok(same.every((id) => id < later[0]!));
});

test.run();

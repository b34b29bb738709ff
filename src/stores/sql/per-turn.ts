/**
 * Reads shared by the requests of one turn of the event loop: every lookup of one key asked
 * during a turn waits for a single read made when the turn is over. The read starts after
 * each of them was asked, so it sees every write committed before then (by this process or
 * another one on the database), as a read of their own would; a revoked API key is refused
 * on the very next request. Under load, the requests that arrive together share one
 * statement instead of one each.
 *
 * With `shareReads` (the driver's), the read of a turn with SHARED_FROM lookups or more
 * starts a snapshot that the reads its answers lead to (the requests' own statements, run as
 * soon as their key is known) share, and a second callback queued right behind the read ends
 * it. Node (as Bun and Deno) runs callbacks queued together for the same turn one after the
 * other, with every promise job in between, so the snapshot holds only what those requests
 * read before the event loop takes anything new (a request, a timer, a finished write), and
 * nothing later reads from it.
 */
import { nextTurn } from "../../next-turn.ts";

// bench/http.ts (get by id): starting and ending a snapshot costs about what two requests'
// reads save by sharing one (the turn's lookup and each request's statement).
/** The fewest lookups in a turn for which its reads share a snapshot. */
const SHARED_FROM = 3;

interface Waiting<V> {
  resolve: (value: V) => void;
  reject: (error: unknown) => void;
}

export function readPerTurn<K, V>(read: (key: K) => Promise<V>, shareReads?: () => () => void): (key: K) => Promise<V> {
  let asked: Map<K, Waiting<V>[]> | undefined;
  let lookups = 0;
  let endShared: (() => void) | undefined;
  const endSharedReads = () => {
    const end = endShared;
    endShared = undefined;
    end?.();
  };
  const readAll = () => {
    const round = asked!;
    asked = undefined;
    const shared = shareReads !== undefined && lookups >= SHARED_FROM;
    lookups = 0;
    try {
      if (shared) endShared = shareReads();
    } catch {
      // Not shared this turn: each read takes its own snapshot, as without shareReads.
    }
    for (const [key, waiting] of round) {
      const answer = (value: V) => {
        for (const caller of waiting) caller.resolve(value);
      };
      const fail = (error: unknown) => {
        for (const caller of waiting) caller.reject(error);
      };
      // Run from a timer: a read that throws instead of rejecting must fail its callers, not the process.
      try {
        read(key).then(answer, fail);
      } catch (error) {
        fail(error);
      }
    }
  };
  return (key) =>
    new Promise<V>((resolve, reject) => {
      if (asked === undefined) {
        asked = new Map();
        nextTurn(readAll);
        if (shareReads) nextTurn(endSharedReads);
      }
      lookups++;
      const waiting = asked.get(key);
      if (waiting) waiting.push({ resolve, reject });
      else asked.set(key, [{ resolve, reject }]);
    });
}

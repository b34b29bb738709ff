/**
 * Reads shared by the requests of one turn of the event loop: every lookup of one key asked
 * during a turn waits for a single read made when the turn is over. The read starts after
 * each of them was asked, so it sees every write committed before then (by this process or
 * another one on the database), as a read of their own would; a revoked API key is refused
 * on the very next request. Under load, the requests that arrive together share one
 * statement instead of one each.
 */
import { nextTurn } from "../../next-turn.ts";

interface Waiting<V> {
  resolve: (value: V) => void;
  reject: (error: unknown) => void;
}

export function readPerTurn<K, V>(read: (key: K) => Promise<V>): (key: K) => Promise<V> {
  let asked: Map<K, Waiting<V>[]> | undefined;
  const readAll = () => {
    const round = asked!;
    asked = undefined;
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
      }
      const waiting = asked.get(key);
      if (waiting) waiting.push({ resolve, reject });
      else asked.set(key, [{ resolve, reject }]);
    });
}

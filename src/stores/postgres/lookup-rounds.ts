/**
 * Lookups by key in rounds: one statement reads every key asked for since the previous round
 * was sent. A lookup asked for while a round is in flight waits for that round to answer and
 * goes into the next one, never into the one in flight: its answer is always read by a
 * statement that started after it was asked for, so it sees every write committed before
 * then (by any server), as a statement of its own would. A lookup asked for when none is in
 * flight is sent at once.
 */

interface Caller<V> {
  resolve: (value: V | undefined) => void;
  reject: (error: unknown) => void;
}

export function lookupRounds<K, V>(read: (keys: readonly K[]) => Promise<ReadonlyMap<K, V>>): (key: K) => Promise<V | undefined> {
  let waiting: Map<K, Caller<V>[]> | undefined;
  let inFlight = false;

  const send = async () => {
    inFlight = true;
    while (waiting !== undefined) {
      const round = waiting;
      waiting = undefined;
      try {
        const found = await read([...round.keys()]);
        for (const [key, callers] of round) for (const caller of callers) caller.resolve(found.get(key));
      } catch (error) {
        for (const callers of round.values()) for (const caller of callers) caller.reject(error);
      }
    }
    inFlight = false;
  };

  return (key) =>
    new Promise<V | undefined>((resolve, reject) => {
      waiting ??= new Map();
      const callers = waiting.get(key);
      if (callers) callers.push({ resolve, reject });
      else waiting.set(key, [{ resolve, reject }]);
      if (!inFlight) void send();
    });
}

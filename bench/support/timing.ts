/** Timing calls one by one, for the store benchmarks. */

/** Milliseconds each call of `run` took, after `warmup` untimed calls. */
export async function timeEach<T>(inputs: readonly T[], run: (input: T) => Promise<unknown>, warmup = 0): Promise<number[]> {
  for (const input of inputs.slice(0, warmup)) await run(input);
  const times: number[] = [];
  for (const input of inputs) {
    const started = performance.now();
    await run(input);
    times.push(performance.now() - started);
  }
  return times;
}

/**
 * The `p`th percentile (0 to 100) by nearest rank: the smallest time at least `p`% of the times
 * are at or below, so the p99 of 100 timings is the 99th of them in order, not the slowest.
 */
export function percentile(times: readonly number[], p: number): number {
  const sorted = [...times].sort((a, b) => a - b);
  const rank = Math.max(1, Math.ceil((p / 100) * sorted.length));
  return sorted[Math.min(sorted.length, rank) - 1]!;
}

/** The median: the mean of the two middle values of an even count; NaN of none. */
export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const half = Math.floor(sorted.length / 2);
  return sorted.length === 0 ? NaN : sorted.length % 2 === 1 ? sorted[half]! : (sorted[half - 1]! + sorted[half]!) / 2;
}

export const ms = (value: number) => `${value.toFixed(value < 10 ? 2 : 1)} ms`;

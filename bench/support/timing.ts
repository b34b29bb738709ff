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

export function percentile(times: readonly number[], p: number): number {
  const sorted = [...times].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

export const ms = (value: number) => `${value.toFixed(value < 10 ? 2 : 1)} ms`;

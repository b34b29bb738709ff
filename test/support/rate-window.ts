/**
 * Rate limits count in fixed windows aligned to the epoch (src/routes/create/rate-limit.ts): a
 * burst that runs across a window's end starts counting again midway. Waits, if need be, until
 * the current window of `windowSeconds` has at least `roomMs` left, so that a test's burst is
 * counted in one window.
 */
export async function roomInWindow(windowSeconds: number, roomMs: number): Promise<void> {
  const windowMs = windowSeconds * 1000;
  const left = windowMs - (Date.now() % windowMs);
  if (left < roomMs) await new Promise((resolve) => setTimeout(resolve, left + 100));
}

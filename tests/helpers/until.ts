/** Polls `probe` until it gives a value, or fails naming what it waited for. */
export async function until<T>(
  probe: () => Promise<T | undefined> | T | undefined,
  timeoutMs: number,
  what: string,
  intervalMs = 100,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}

/** Run `fn` over `items` with at most `width` in flight (fsyncs and copies of many small files). */
export async function inPool<T>(items: readonly T[], fn: (item: T) => Promise<unknown>, width = 16): Promise<void> {
  let next = 0;
  let failed: unknown = null;
  const worker = async (): Promise<void> => {
    while (failed === null && next < items.length) {
      const item = items[next++]!;
      try {
        await fn(item);
      } catch (err) {
        failed ??= err;
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(width, items.length) }, worker));
  if (failed !== null) throw failed;
}

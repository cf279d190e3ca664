/**
 * Per-test cleanup, registered once per file: what a test starts (a server, a temp folder) is
 * pushed here and undone after that test, last first, whether it passed or not.
 */
import { afterEach } from 'vitest';

export function cleanupAfterEach(): Array<() => Promise<void> | void> {
  const cleanups: Array<() => Promise<void> | void> = [];
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c();
  });
  return cleanups;
}

import { defineConfig } from 'vitest/config';
import { fileURLToPath } from 'node:url';

// Node's compile cache (Node >= 22.1; Node 20 ignores it) for the test workers and every binary the
// tests start, kept inside the clone: about 0.04 s less CPU per start on Node 24, with some 1,500
// starts per run. airlock itself leaves it off (it would write into the shared temp folder).
process.env.NODE_COMPILE_CACHE ??= fileURLToPath(new URL('./node_modules/.cache/node-compile-cache', import.meta.url));

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // Two test files at a time on the 2-core CI machine (vitest's run-mode default is cores - 1 =
    // one): most files wait on child processes, sockets and fsync rather than compute.
    maxWorkers: 2,
    reporters: process.env.CI ? ['default', ['json', { outputFile: 'test-results.json' }]] : ['default'],
  },
});

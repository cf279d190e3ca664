import { defineConfig } from 'vitest/config';

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

import { Worker, type ResourceLimits } from 'node:worker_threads';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';

/**
 * Start a worker thread on `entry` (a module URL ending in `.js` or `.ts`). Compiled (dist): the
 * `.js` entry directly. From source (vitest, tsx): Node 20 workers do not inherit a TS loader, so
 * a tiny eval'd bootstrap loads the `.ts` entry through tsx's scoped `tsImport` (tsx is a dev
 * dependency; dist never needs it). `workerData.data` is what the entry reads.
 */
const BOOTSTRAP = String.raw`
const { workerData } = require('node:worker_threads');
import(workerData.tsxApi).then((tsx) => tsx.tsImport(workerData.entry, workerData.entry))
  .catch((err) => { setImmediate(() => { throw err; }); });
`;

/** File URL of tsx's ESM API (its `exports` map, "import" condition): the dev-only loader. */
function tsxApiUrl(): string {
  const require = createRequire(import.meta.url);
  const pkgPath = require.resolve('tsx/package.json');
  const pkg = require(pkgPath) as { exports: Record<string, { import: { default: string } }> };
  return pathToFileURL(join(dirname(pkgPath), pkg.exports['./esm/api']!.import.default)).href;
}

export function spawnWorker(entry: URL, data: unknown, o: { resourceLimits?: ResourceLimits } = {}): Worker {
  if (!entry.href.endsWith('.ts')) return new Worker(entry, { workerData: { data }, resourceLimits: o.resourceLimits });
  return new Worker(BOOTSTRAP, { eval: true, workerData: { data, entry: entry.href, tsxApi: tsxApiUrl() }, resourceLimits: o.resourceLimits });
}

/** The sibling module `name` (without extension) of `base`, as `.ts` from source and `.js` compiled. */
export function siblingEntry(base: string, name: string): URL {
  return new URL(`./${name}.${base.endsWith('.ts') ? 'ts' : 'js'}`, base);
}

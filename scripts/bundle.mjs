// Bundles the CLI after `tsc` (npm run build): dist/src/cli/bin.js becomes one entry module plus
// lazily loaded chunks beside it, with zod inlined, instead of some 150–450 small modules loaded
// one by one. Each command starts with about a third less CPU (measured in docs/design.md).
// Every other dependency stays an import of node_modules; tsc's per-module output stays in
// dist/src for the worker threads, which load their entry from there.
import { build } from 'esbuild';
import { readFile, readdir, rm } from 'node:fs/promises';
import { join, relative } from 'node:path';
import process from 'node:process';
import { fileURLToPath, URL } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const out = join(root, 'dist/src/cli');
const pkg = JSON.parse(await readFile(join(root, 'package.json'), 'utf8'));
const INLINED = new Set(['zod']);

// A module that finds files next to itself (workers, the features folder, package.json) must see
// its own place in dist/src, not the bundle's: its import.meta.url is rewritten to the URL of
// the file tsc emitted for it. Every bundle file sits in dist/src/cli, so '../' is dist/src.
const ownUrl = {
  name: 'own-import-meta-url',
  setup(b) {
    b.onLoad({ filter: /[\\/]src[\\/].*\.ts$/ }, async (args) => {
      const text = await readFile(args.path, 'utf8');
      if (!text.includes('import.meta.url')) return undefined;
      const emitted = '../' + relative(join(root, 'src'), args.path).replace(/\\/g, '/').replace(/\.ts$/, '.js');
      return { contents: text.replaceAll('import.meta.url', `new URL(${JSON.stringify(emitted)}, import.meta.url).href`), loader: 'ts' };
    });
  },
};

for (const name of await readdir(out)) if (name.startsWith('chunk-')) await rm(join(out, name));
await build({
  entryPoints: [join(root, 'src/cli/bin.ts')],
  outdir: out,
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20.18',
  chunkNames: 'chunk-[hash]',
  sourcemap: true,
  minifyWhitespace: process.env.AIRLOCK_BUNDLE_MINIFY === '1',
  external: [...Object.keys(pkg.dependencies).filter((d) => !INLINED.has(d)), ...Object.keys(pkg.optionalDependencies ?? {})],
  plugins: [ownUrl],
  logLevel: 'warning',
});

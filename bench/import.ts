/**
 * `npm run bench:import` (issue 2 "Fast"): airlock's import (extract + every digest verified +
 * fsync, variants NOT included) against GNU `tar -xzf` and `unzip -q` of the same archive onto
 * the same disk, plus airlock's peak RSS (the import runs in a child process; maxRSS from
 * process.resourceUsage()). Target: ratio <= 2x, RSS < 150 MB at every size.
 *   node --import tsx bench/import.ts [--sizes 100,1000] [--runs 3] [--dir DIR]
 * Needs the compiled tool (npm run build): the child imports dist/, so tsx is not in its RSS.
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, rm, stat } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { generateSite } from '../fixtures/generate.js';
import { scanArchive } from '../src/archive/index.js';
import { writePackage, type Manifest } from '../src/package/index.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const DIST_STORE = join(ROOT, 'dist/src/store/index.js');
/** Site shapes: 100 MB ≈ 3,000 files (issue 2); 1 GB ≈ 10,000 larger pages. */
const SHAPES: Record<string, { pages: number; bytesPerPage: number }> = {
  '100': { pages: 2900, bytesPerPage: 37_000 },
  '1000': { pages: 10_000, bytesPerPage: 100_000 },
};

const { values } = parseArgs({ options: { sizes: { type: 'string', default: '100,1000' }, runs: { type: 'string', default: '3' }, dir: { type: 'string' } } });
const runs = Number(values.runs);
const work = resolve(values.dir ?? join(ROOT, 'bench/out/import'));
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

function sh(cmd: string, args: string[], cwd?: string): number {
  const t0 = performance.now();
  const r = spawnSync(cmd, args, { cwd, stdio: ['ignore', 'ignore', 'inherit'] });
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} failed (${r.status ?? r.signal})`);
  return performance.now() - t0;
}

/** One airlock import in a fresh process; returns the import's own time and the process's peak RSS. */
function airlockImport(pkg: string, store: string): { ms: number; wallMs: number; rssMB: number } {
  const code = `import { importPackage } from ${JSON.stringify(pathToFileURL(DIST_STORE).href)};
const t0 = performance.now();
await importPackage(${JSON.stringify(pkg)}, { store: ${JSON.stringify(store)}, trust: [], allowUnsigned: true });
const ms = performance.now() - t0;
process.stdout.write(JSON.stringify({ ms, rssMB: process.resourceUsage().maxRSS / 1024 }));`;
  const t0 = performance.now();
  const r = spawnSync(process.execPath, ['--input-type=module', '-e', code], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });
  const wallMs = performance.now() - t0;
  if (r.status !== 0) throw new Error(`airlock import of ${pkg} failed (${r.status ?? r.signal})`);
  return { ...(JSON.parse(r.stdout) as { ms: number; rssMB: number }), wallMs };
}

async function prepare(size: string): Promise<{ files: number; bytes: number; pkgs: Record<'tar.gz' | 'zip', { archive: string; pkg: string }> }> {
  const dir = join(work, `site-${size}mb`);
  const shape = SHAPES[size];
  if (!shape) throw new Error(`unknown size ${size} (known: ${Object.keys(SHAPES).join(', ')})`);
  const site = join(dir, 'site');
  await rm(dir, { recursive: true, force: true });
  await mkdir(dir, { recursive: true });
  process.stderr.write(`[${size} MB] generating site...\n`);
  const gen = await generateSite(site, { pages: shape.pages, bytesPerPage: shape.bytesPerPage });
  sh('tar', ['-czf', 'bundle.tar.gz', 'site'], dir);
  sh('zip', ['-qr', 'bundle.zip', 'site'], dir);
  await rm(site, { recursive: true, force: true });
  const pkgs = {} as Record<'tar.gz' | 'zip', { archive: string; pkg: string }>;
  for (const format of ['tar.gz', 'zip'] as const) {
    const archive = join(dir, format === 'zip' ? 'bundle.zip' : 'bundle.tar.gz');
    const scan = await scanArchive({ path: archive });
    const manifest: Manifest = {
      format: 'airlock-package/1', domain: 'docs.example.com', version: `bench-${size}`, jobId: null, createdAt: new Date().toISOString(),
      pageCount: shape.pages, archive: { name: format === 'zip' ? 'bundle.zip' : 'bundle.tar.gz', format, size: scan.archiveSize, sha256: scan.archiveSha256 }, files: scan.files,
    };
    const pkg = join(dir, `bench-${format === 'zip' ? 'zip' : 'tgz'}.airlock`);
    await writePackage({ outPath: pkg, manifest, archivePath: archive });
    pkgs[format] = { archive, pkg };
  }
  return { ...gen, pkgs };
}

async function bench(size: string): Promise<void> {
  const { files, bytes, pkgs } = await prepare(size);
  for (const format of ['tar.gz', 'zip'] as const) {
    const { archive, pkg } = pkgs[format];
    const ours: { ms: number; wallMs: number; rssMB: number }[] = [];
    const theirs: number[] = [];
    for (let i = 0; i < runs; i++) {
      const store = join(work, 'store');
      const dest = join(work, 'dest');
      await rm(store, { recursive: true, force: true });
      await rm(dest, { recursive: true, force: true });
      await mkdir(dest, { recursive: true });
      spawnSync('sync');
      theirs.push(format === 'zip' ? sh('unzip', ['-q', archive, '-d', dest]) : sh('tar', ['-xzf', archive, '-C', dest]));
      await rm(dest, { recursive: true, force: true });
      spawnSync('sync');
      ours.push(airlockImport(pkg, store));
      await rm(store, { recursive: true, force: true });
    }
    const a = median(ours.map((o) => o.ms));
    const w = median(ours.map((o) => o.wallMs));
    const g = median(theirs);
    const rss = Math.max(...ours.map((o) => o.rssMB));
    const rssMedian = median(ours.map((o) => o.rssMB));
    const tool = format === 'zip' ? 'unzip -q' : 'tar -xzf';
    process.stdout.write(`${size} MB site (${files} files, ${(bytes / 1048576).toFixed(0)} MB, ${format} ${((await stat(archive)).size / 1048576).toFixed(0)} MB): ` +
      `airlock import ${(a / 1000).toFixed(2)} s (process ${(w / 1000).toFixed(2)} s), ${tool} ${(g / 1000).toFixed(2)} s, ratio ${(a / g).toFixed(2)}x (process ${(w / g).toFixed(2)}x), ` +
      `peak RSS ${rssMedian.toFixed(0)} MB median, ${rss.toFixed(0)} MB max  [medians of ${runs}]\n`);
  }
  await rm(join(work, `site-${size}mb`), { recursive: true, force: true });
}

if (!existsSync(DIST_STORE)) throw new Error('build first: npm run build (the benchmark imports the compiled tool)');
for (const size of String(values.sizes).split(',').map((s) => s.trim()).filter(Boolean)) await bench(size);

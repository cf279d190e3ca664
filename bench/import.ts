/**
 * `npm run bench:import` (real-export performance): what an operator waits for. Each run, on a fresh store that
 * already serves a small version through a running `airlock serve` (compiled, dist/):
 *   - airlock: spawn `airlock import PKG --activate` (the built binary) and time until the server
 *     answers the new version's pages with their final bytes (X-Airlock-Version of the new
 *     version, transformed, br-compressed, CSP present) — "import-to-served";
 *   - peer: GNU `tar -xzf` of the same archive onto the same disk, in the same run.
 * Also the command's own wall time, its CPU (user+sys) and the peak RSS of its whole process tree
 * (worker threads included: they share the process; /proc polled every 20 ms for any child
 * process, plus the kernel's maxrss from /usr/bin/time). Second row: extraction only
 * (importPackage: copy, extract, every digest, fsync; no serving preparation), as before.
 *   node --import tsx bench/import.ts [--sites gen3000,real,1gb] [--runs 3] [--dir DIR] [--no-extract-row]
 * Sites: gen3000 = generated 3,000-page site (≈100 MB); real = real-export-shaped (2,000 HTML pages
 * of which 1,000 redirect stubs, 4,000 files: hashed assets, small images, a few large images);
 * 1gb = generated 10,000 pages of 100 KB.
 * Nothing is deleted until the last timed run (bench/settle.ts): every run's outputs stay until
 * the end, about 3 × runs × each site's size on disk (13 GB for all three sites at the defaults).
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { mkdir, stat } from 'node:fs/promises';
import { request } from 'node:http';
import { join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { brotliDecompressSync } from 'node:zlib';
import { generateSite, committedSiteDir, type GenerateOptions } from '../fixtures/generate.js';
import { scanArchive } from '../src/archive/index.js';
import { writePackage, type Manifest } from '../src/package/index.js';
import { padRealExport, REAL_EXPORT } from './real-site.js';
import { remove, settle } from './settle.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const BIN = join(ROOT, 'dist/src/cli/bin.js');
const DIST_STORE = join(ROOT, 'dist/src/store/index.js');

interface SiteShape {
  label: string;
  gen: GenerateOptions;
  pad?: (site: string) => Promise<void>;
}
const SITES: Record<string, SiteShape> = {
  gen3000: { label: 'generated 3,000 pages', gen: { pages: 2900, bytesPerPage: 37_000 } },
  real: { label: 'real-export-shaped', gen: REAL_EXPORT, pad: padRealExport },
  '1gb': { label: 'generated 1 GB', gen: { pages: 10_000, bytesPerPage: 100_000 } },
};

const { values } = parseArgs({
  options: {
    sites: { type: 'string', default: 'gen3000,real' },
    runs: { type: 'string', default: '3' },
    dir: { type: 'string' },
    'no-extract-row': { type: 'boolean', default: false },
  },
});
const runs = Number(values.runs);
const work = resolve(values.dir ?? join(ROOT, 'bench/out/import'));
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const s = (ms: number) => (ms / 1000).toFixed(2) + ' s';

function sh(cmd: string, args: string[], cwd?: string): number {
  const t0 = performance.now();
  const r = spawnSync(cmd, args, { cwd, stdio: ['ignore', 'ignore', 'inherit'] });
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} failed (${r.status ?? r.signal})`);
  return performance.now() - t0;
}

interface Prepared {
  files: number;
  bytes: number;
  htmlPaths: string[];
  archive: string;
  pkg: string;
  label: string;
}

async function makePackage(dir: string, site: string, label: string, pageCount: number): Promise<{ archive: string; pkg: string; manifest: Manifest }> {
  const archive = join(dir, `${label}.tar.gz`);
  sh('tar', ['-czf', archive, '-C', site, '.']);
  const scan = await scanArchive({ path: archive });
  const manifest: Manifest = {
    format: 'airlock-package/1',
    domain: 'docs.example.com',
    version: label,
    jobId: null,
    createdAt: new Date().toISOString(),
    pageCount,
    archive: { name: 'bundle.tar.gz', format: 'tar.gz', size: scan.archiveSize, sha256: scan.archiveSha256 },
    files: scan.files,
  };
  const pkg = join(dir, `${label}.airlock`);
  await writePackage({ outPath: pkg, manifest, archivePath: archive });
  return { archive, pkg, manifest };
}

async function prepare(name: string): Promise<Prepared> {
  const shape = SITES[name];
  if (!shape) throw new Error(`unknown site ${name} (known: ${Object.keys(SITES).join(', ')})`);
  const dir = join(work, `site-${name}`);
  const site = join(dir, 'site');
  await remove(dir);
  await mkdir(dir, { recursive: true });
  process.stderr.write(`[${name}] generating site...\n`);
  await generateSite(site, shape.gen);
  await shape.pad?.(site);
  const label = `bench-${name}`;
  const { archive, pkg, manifest } = await makePackage(dir, site, label, shape.gen.pages);
  const html = manifest.files.filter((f) => f.path.endsWith('.html')).map((f) => f.path);
  // A spread sample of pages (stubs and full pages), checked for final bytes after the import.
  const step = Math.max(1, Math.floor(html.length / 24));
  const htmlPaths = html.filter((_, i) => i % step === 0).slice(0, 24);
  return { files: manifest.files.length, bytes: manifest.files.reduce((n, f) => n + f.size, 0), htmlPaths, archive, pkg, label };
}

interface Served {
  pid: number;
  url: string;
  stop: () => Promise<void>;
}
function startServe(store: string): Promise<Served> {
  const child = spawn(process.execPath, [BIN, 'serve', '--store', store, '--port', '0'], { stdio: ['ignore', 'pipe', 'pipe'] });
  let err = '';
  child.stderr.on('data', (c: Buffer) => (err += c.toString()));
  const stop = async () => {
    if (child.exitCode !== null) return;
    const exited = new Promise((r) => child.once('exit', r));
    child.kill('SIGTERM');
    await exited;
  };
  return new Promise((res, rej) => {
    let out = '';
    child.stdout.on('data', (c: Buffer) => {
      out += c.toString();
      const m = /^(http:\/\/\S+)\n/m.exec(out);
      if (m) res({ pid: child.pid!, url: m[1]!.replace(/\/$/, ''), stop });
    });
    child.once('exit', (code) => rej(new Error(`airlock serve exited (${code}): ${err}`)));
  });
}

interface Got {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
}
function get(url: string, enc: string): Promise<Got> {
  return new Promise((res, rej) => {
    request(url, { headers: { 'accept-encoding': enc } }, (r) => {
      const parts: Buffer[] = [];
      r.on('data', (c: Buffer) => parts.push(c));
      r.on('end', () => res({ status: r.statusCode ?? 0, headers: r.headers, body: Buffer.concat(parts) }));
    })
      .on('error', rej)
      .end();
  });
}

/** URL of a page path: `a/index.html` → `/a/`, others as they are. */
const urlOf = (p: string) => '/' + p.replace(/(^|\/)index\.html$/, '$1');

/**
 * True when every sampled page is answered from `label` with its final bytes: br-encoded,
 * decoding to the same bytes as the identity answer, with a CSP header, and with none of the
 * analytics the air-gapped transform removes.
 */
async function servedFinal(url: string, label: string, paths: string[]): Promise<boolean> {
  for (const p of paths) {
    const b = await get(url + urlOf(p), 'br');
    if (b.status !== 200 || b.headers['x-airlock-version'] !== label || b.headers['content-encoding'] !== 'br' || !b.headers['content-security-policy'])
      return false;
    const plain = brotliDecompressSync(b.body);
    const id = await get(url + urlOf(p), 'identity');
    if (id.headers['x-airlock-version'] !== label || !id.body.equals(plain)) return false;
    if (plain.includes('googletagmanager.com')) throw new Error(`${p} served with analytics: not transformed`);
  }
  return true;
}

/** Sum of VmRSS over `pid` and its descendants (MB). */
function treeRssMb(pid: number): number {
  const kids = new Map<number, number[]>();
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const ppid = Number(/\) \S+ (\d+)/.exec(readFileSync(`/proc/${d}/stat`, 'utf8'))?.[1]);
      kids.set(ppid, [...(kids.get(ppid) ?? []), Number(d)]);
    } catch {
      /* gone */
    }
  }
  let kb = 0;
  const walk = (p: number) => {
    try {
      kb += Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${p}/status`, 'utf8'))?.[1] ?? 0);
    } catch {
      /* gone */
    }
    for (const k of kids.get(p) ?? []) walk(k);
  };
  walk(pid);
  return kb / 1024;
}

/**
 * The second peer does what an import guarantees and tar alone does not: every file's digest
 * checked (sha256sum reads each file back, as the import hashes each one) and every byte on disk
 * before it returns (sync -f: one syncfs of the file system, cheaper than the import's fsync per
 * file). The package digest and signature, the HTML preparation and compression are not in it.
 */
const SAME_GUARANTEES = 'tar -xzf "$1" -C "$2" && find "$2" -type f -print0 | xargs -0 sha256sum >/dev/null && sync -f "$2"';

interface Run {
  cmdMs: number;
  servedMs: number;
  cpuS: number;
  rssMB: number;
}

/** One `airlock import --activate` under /usr/bin/time, with a running server; until served. */
async function importToServed(p: Prepared, store: string, served: Served): Promise<Run> {
  const t0 = performance.now();
  const child = spawn('/usr/bin/time', ['-f', '%M %U %S', process.execPath, BIN, 'import', p.pkg, '--store', store, '--allow-unsigned', '--activate'], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let err = '';
  child.stderr.on('data', (c: Buffer) => (err += c.toString()));
  let polled = 0;
  const poll = setInterval(() => (polled = Math.max(polled, treeRssMb(child.pid!) - 1)), 20); // minus /usr/bin/time itself (~1-2 MB)
  const code = await new Promise<number | null>((r) => child.once('exit', r));
  clearInterval(poll);
  const cmdMs = performance.now() - t0;
  if (code !== 0) throw new Error(`airlock import failed (${code}): ${err}`);
  const [maxKb, user, sys] = err.trim().split('\n').pop()!.split(' ').map(Number);
  const deadline = performance.now() + 600_000;
  while (!(await servedFinal(served.url, p.label, p.htmlPaths))) {
    if (performance.now() > deadline) throw new Error('the new version was not served within 10 minutes');
    await new Promise((r) => setTimeout(r, 20));
  }
  return { cmdMs, servedMs: performance.now() - t0, cpuS: user! + sys!, rssMB: Math.max(polled, maxKb! / 1024) };
}

/** Extraction only (the former benchmark): importPackage in a fresh process, no serving preparation. */
function extractOnly(pkg: string, store: string): number {
  const code = `import { importPackage } from ${JSON.stringify(pathToFileURL(DIST_STORE).href)};
const t0 = performance.now();
await importPackage(${JSON.stringify(pkg)}, { store: ${JSON.stringify(store)}, trust: [], allowUnsigned: true });
process.stdout.write(JSON.stringify({ ms: performance.now() - t0 }));`;
  const r = spawnSync(process.execPath, ['--input-type=module', '-e', code], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });
  if (r.status !== 0) throw new Error(`importPackage of ${pkg} failed (${r.status ?? r.signal})`);
  return (JSON.parse(r.stdout) as { ms: number }).ms;
}

async function bench(name: string, base: { pkg: string }): Promise<void> {
  const p = await prepare(name);
  const ours: Run[] = [];
  const tar: number[] = [];
  const same: number[] = [];
  const extract: number[] = [];
  // Every run writes into folders of its own, and nothing is deleted until the benchmark ends
  // (bench/settle.ts: on this VM's ext4 without a journal, files created within minutes of a
  // mass delete are slower to create, and the old loop deleted a store or tar's output right
  // before each timed run).
  await settle();
  for (let i = 0; i < runs; i++) {
    const [store, dest, xstore, sdest] = ['store', 'dest', 'xstore', 'sdest'].map((k) => join(work, `${k}-${name}-${i}`)) as [string, string, string, string];
    sh(process.execPath, [BIN, 'import', base.pkg, '--store', store, '--allow-unsigned', '--activate']);
    const served = await startServe(store);
    try {
      await mkdir(dest, { recursive: true });
      spawnSync('sync');
      tar.push(sh('tar', ['-xzf', p.archive, '-C', dest]));
      spawnSync('sync');
      await mkdir(sdest, { recursive: true });
      same.push(sh('sh', ['-c', SAME_GUARANTEES, 'sh', p.archive, sdest]));
      spawnSync('sync');
      const r = await importToServed(p, store, served);
      ours.push(r);
      process.stderr.write(
        `[${name}] run ${i + 1}: tar ${s(tar.at(-1)!)}, tar+sha256sum+sync ${s(same.at(-1)!)}, import ${s(r.cmdMs)}, served ${s(r.servedMs)}, CPU ${r.cpuS.toFixed(1)} s, RSS ${r.rssMB.toFixed(0)} MB\n`,
      );
    } finally {
      await served.stop();
    }
    if (!values['no-extract-row']) {
      spawnSync('sync');
      extract.push(extractOnly(p.pkg, xstore));
    }
  }
  const g = median(tar);
  const sg = median(same);
  const served = median(ours.map((o) => o.servedMs));
  const cmd = median(ours.map((o) => o.cmdMs));
  const rss = ours.map((o) => o.rssMB);
  const size = (await stat(p.archive)).size / 1048576;
  process.stdout.write(
    `\n${SITES[name]!.label}: ${p.files} files, ${(p.bytes / 1048576).toFixed(0)} MB, tar.gz ${size.toFixed(0)} MB [medians of ${runs}, same run]\n`,
  );
  process.stdout.write(`| | airlock | tar -xzf | ratio | tar + sha256sum + sync | ratio |\n|---|---:|---:|---:|---:|---:|\n`);
  process.stdout.write(
    `| import --activate → served (final bytes) | ${s(served)} | ${s(g)} | ${(served / g).toFixed(2)}× | ${s(sg)} | ${(served / sg).toFixed(2)}× |\n`,
  );
  process.stdout.write(`| import --activate (command exits) | ${s(cmd)} | ${s(g)} | ${(cmd / g).toFixed(2)}× | ${s(sg)} | ${(cmd / sg).toFixed(2)}× |\n`);
  if (extract.length) process.stdout.write(`| extraction only (importPackage) | ${s(median(extract))} | ${s(g)} | ${(median(extract) / g).toFixed(2)}× |\n`);
  process.stdout.write(`| CPU user+sys (command) | ${median(ours.map((o) => o.cpuS)).toFixed(1)} s | | |\n`);
  process.stdout.write(`| peak RSS, process tree (command) | ${median(rss).toFixed(0)} MB median, ${Math.max(...rss).toFixed(0)} MB max | | goal ≤ 150 MB |\n`);
}

if (!existsSync(BIN)) throw new Error('build first: npm run build (the benchmark runs the compiled tool)');
await mkdir(work, { recursive: true });
const baseDir = join(work, 'base');
await mkdir(baseDir, { recursive: true });
const base = await makePackage(baseDir, committedSiteDir(), 'base', 16);
try {
  for (const name of String(values.sites)
    .split(',')
    .map((x) => x.trim())
    .filter(Boolean))
    await bench(name, base);
} finally {
  await remove(work);
}
